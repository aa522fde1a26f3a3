"""Hugging Face tokenizers' side of the byte-level BPE parity tests (tests/data/bpe_tokenizer_test.cpp).

bpe_reference.py TEXT OUT [VOCAB]: trains a GPT-2-style byte-level BPE on TEXT (the ByteLevel
pre-tokenizer and decoder, all 256 bytes in the alphabet, <|endoftext|> added) and writes to OUT:
  tokenizer.json          as Python saves it (merges as [["a", "b"]] lists)
  tokenizer_strings.json  the same, merges as "a b" strings (the older form, GPT-2's own files)
  tokenizer_prefix.json   the same with add_prefix_space = true
  ids.json                Tokenizer.encode(text).ids of the whole TEXT (tokenizer.json)
  edge.txt, edge_ids.json, edge_prefix_ids.json   GPT-2's pattern's edge cases and their ids
  random.txt, random_ids.json   60,000 draws from every assigned code point, kinds of space,
                          apostrophes and contractions (a seeded mix), and their ids
  tokenizer_added.json, random_added_ids.json   with added tokens that strip spaces (<mask>, as
                          RoBERTa's) or match whole words only ("hack"), and random.txt's ids
  wordpiece.json, unigram.json, whitespace.json, bad_merge.json   tokenizers ours refuses
  seconds.json            Python's encode time of TEXT
"""
import json
import os
import random
import sys
import time
import unicodedata

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

EDGE = ("Hello world! It's 2024; we'll've they'RE don't  two  spaces   three\n\nnew lines\r\n\ttabs\t\t end \n"
        "café naïve Ünïcödé 日本語の文 ١٢٣ ½ Ⅻ 😀🎉 a😀b <|endoftext|>next doc<|endoftext|> 'quoted' ''s"
        " x'  y  \u00a0nbsp\u3000ideographic\u2028line 12345678 3.14 $1,000 #tag @user   \n   ")


def main():
    text_file, out = sys.argv[1], sys.argv[2]
    vocab = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    text = open(text_file, encoding="utf-8", newline="").read()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"], show_progress=False)
    tok.train([text_file], trainer)
    path = os.path.join(out, "tokenizer.json")
    tok.save(path)
    start = time.perf_counter()
    ids = tok.encode(text).ids
    seconds = time.perf_counter() - start
    assert tok.decode(ids, skip_special_tokens=False) == text, "python round trip"
    json.dump(ids, open(os.path.join(out, "ids.json"), "w"))
    json.dump({"encode": seconds}, open(os.path.join(out, "seconds.json"), "w"))
    open(os.path.join(out, "edge.txt"), "w", encoding="utf-8", newline="").write(EDGE)
    json.dump(tok.encode(EDGE).ids, open(os.path.join(out, "edge_ids.json"), "w"))

    doc = json.load(open(path, encoding="utf-8"))
    assert isinstance(doc["model"]["merges"][0], list), "tokenizers saves merges as lists"
    strings = json.loads(json.dumps(doc))
    strings["model"]["merges"] = [" ".join(m) for m in doc["model"]["merges"]]
    json.dump(strings, open(os.path.join(out, "tokenizer_strings.json"), "w", encoding="utf-8"), ensure_ascii=False)
    assert Tokenizer.from_file(os.path.join(out, "tokenizer_strings.json")).encode(EDGE).ids == tok.encode(EDGE).ids
    prefix = json.loads(json.dumps(doc))
    prefix["pre_tokenizer"]["add_prefix_space"] = True
    json.dump(prefix, open(os.path.join(out, "tokenizer_prefix.json"), "w", encoding="utf-8"), ensure_ascii=False)
    json.dump(Tokenizer.from_file(os.path.join(out, "tokenizer_prefix.json")).encode(EDGE).ids,
              open(os.path.join(out, "edge_prefix_ids.json"), "w"))
    bad = json.loads(json.dumps(doc))
    bad["model"]["merges"].append(["zq", "qz"])
    json.dump(bad, open(os.path.join(out, "bad_merge.json"), "w", encoding="utf-8"), ensure_ascii=False)

    rng = random.Random(5)
    pools = [[chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and unicodedata.category(chr(c)) != "Cn"],
             list(" \t\n\r\u00a0\u2003\u3000\u0085\u2028"), list("'sdmtlrev"), list("abc XYZ 0123 .,;!?-"),
             ["'s", "'ll", "'re", "'ve", "'d", " '", "  ", "\n\n"]]
    mixed = "".join(rng.choice(pools[rng.choice([0, 1, 1, 2, 3, 3, 4])]) for _ in range(60000))
    mixed += " <|endoftext|> <mask>  x <mask>y hack hacker hack_ hack."
    open(os.path.join(out, "random.txt"), "w", encoding="utf-8", newline="").write(mixed)
    json.dump(tok.encode(mixed).ids, open(os.path.join(out, "random_ids.json"), "w"))
    tok.add_tokens([AddedToken("<mask>", lstrip=True, rstrip=True), AddedToken("hack", single_word=True)])
    tok.save(os.path.join(out, "tokenizer_added.json"))
    json.dump(tok.encode(mixed).ids, open(os.path.join(out, "random_added_ids.json"), "w"))

    # Tokenizers of other kinds, trained on the same text.
    for name, model, trainer in [
        ("wordpiece", models.WordPiece(unk_token="[UNK]"), trainers.WordPieceTrainer(vocab_size=500, special_tokens=["[UNK]"], show_progress=False)),
        ("unigram", models.Unigram(), trainers.UnigramTrainer(vocab_size=500, show_progress=False)),
        ("whitespace", models.BPE(), trainers.BpeTrainer(vocab_size=500, show_progress=False)),
    ]:
        other = Tokenizer(model)
        other.pre_tokenizer = pre_tokenizers.Whitespace()
        other.train([text_file], trainer)
        other.save(os.path.join(out, name + ".json"))


if __name__ == "__main__":
    main()
