"""The Python side of bench/tokenizer_bench.cpp: Hugging Face tokenizers and sentencepiece
encoding the same text with the same files, one timed encode per request.

tokenizer_peer.py TEXT TOKENIZER_JSON SPM_MODEL
  "bpe"  -> {"seconds": Tokenizer.encode(text) wall time, "tokens": n, "threads": RAYON threads}
  "spm"  -> {"seconds": SentencePieceProcessor.encode(text) wall time, "tokens": n}
"""
import os
import sys
import time

from peer_protocol import answer, import_or_skip, serve


def main():
    modules = import_or_skip("tokenizers", "sentencepiece")
    if modules is None:
        return
    tokenizers, sentencepiece = modules
    text_file, tokenizer_json, spm_model = sys.argv[1:4]
    text = open(text_file, encoding="utf-8", newline="").read()
    bpe = tokenizers.Tokenizer.from_file(tokenizer_json)
    spm = sentencepiece.SentencePieceProcessor(model_file=spm_model)
    answer({"ready": True, "tokenizers": tokenizers.__version__, "sentencepiece": sentencepiece.__version__,
            "rayon_threads": os.environ.get("RAYON_NUM_THREADS", "default")})

    def timed(encode):
        start = time.perf_counter()
        n = len(encode())
        return {"seconds": time.perf_counter() - start, "tokens": n}

    serve({"bpe": lambda _: timed(lambda: bpe.encode(text).ids),
           "spm": lambda _: timed(lambda: spm.encode(text))})


if __name__ == "__main__":
    main()
