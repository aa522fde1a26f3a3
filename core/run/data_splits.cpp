#include "run/data_splits.h"

#include <cstdint>
#include <string>

#include "data/data_error.h"
#include "data/validation_split.h"
#include "run/build_task.h"

namespace plugtrain {

namespace {

// The data set's own val split chooses the model (data.val_fraction is not set).
bool own_val_validates(const Experiment& e, const data::LoadedData& loaded) {
  return !loaded.own_val_split.empty() && !(e.data.val_fraction > 0);
}

std::string every(std::int64_t epochs) { return epochs == 1 ? "every epoch" : "every " + std::to_string(epochs) + " epochs"; }

std::string when_tested(const Experiment& e) {
  return (e.train.test_every > 0 ? every(e.train.test_every) + " and " : std::string()) + "after the last epoch";
}

}  // namespace

void settle_splits(const Experiment& e, data::LoadedData& loaded) {
  data::DatasetPair& d = loaded.data;
  d.train = data::subset(d.train, e.data.train_subset);
  // data.test_subset cuts the test split only: a split that chooses the model stays whole, also
  // where it is the test split too (data.test_subset may change on a resume).
  if (!loaded.test_unlabelled) d.test = data::subset(d.test, e.data.test_subset);
  if (!(e.data.val_fraction > 0)) {
    d.test_is_val = loaded.test_unlabelled;
    return;
  }
  if (d.train.tokens())  // windows at every offset share their tokens: a held-out window's tokens train its neighbours
    throw data::DataError("data.val_fraction: a language model's training windows overlap, so held-out windows would "
                          "not be unseen text; the text data sets split by [dataset] val_fraction (the end of the text)");
  if (loaded.test_unlabelled) d.test = data::subset(d.test, e.data.test_subset);  // the own val, now the test split
  if (!loaded.own_val_split.empty() && !loaded.test_unlabelled)
    loaded.notes.push_back("data.val_fraction holds out the validation split, so the data set's own " + loaded.own_val_split +
                           " split (" + std::to_string(d.val.size()) + " samples) is not used");
  d.val = data::split_validation(d.train, e.data.val_fraction, static_cast<std::uint64_t>(e.experiment.seed));
}

void log_splits(const Experiment& e, const data::LoadedData& loaded, const data::DatasetPair& data, std::ostream& log) {
  const bool own = own_val_validates(e, loaded);
  log << "data: " << loaded.source << ", " << data.train.size() << " training";
  if (own && !loaded.test_unlabelled) log << ", " << data.val.size() << " " << loaded.own_val_split;
  log << " and " << data.test.size() << " " << loaded.test_split << " samples, " << targets_text(data.train) << "\n";
  // Which split chooses the model: said in every run, so an old experiment's log shows it too.
  const std::string uses = "monitors, early stopping and best checkpoints use val_ metrics; ";
  if (own && loaded.test_unlabelled)
    log << "data: validation split: the data set's own " << loaded.own_val_split << " split (" << data.val.size()
        << " samples): " << uses
        << "the data set has no labelled test split, so the metrics after the last epoch are on "
        << loaded.own_val_split
        << " too, which chose the model (data.val_fraction would hold out a share of the training "
        << "set to choose by and keep " << loaded.own_val_split << " for the test)\n";
  else if (own)
    log << "data: validation split: the data set's own " << loaded.own_val_split << " split (" << data.val.size()
        << " samples): " << uses << "the test set is evaluated " << when_tested(e) << "\n";
  else if (data.has_val())
    log << "data: validation split of " << data.val.size() << " samples held out of the training set (data.val_fraction "
        << e.data.val_fraction << ", seed " << e.experiment.seed << "): " << uses << "the test set"
        << (loaded.test_unlabelled ? " (the data set's " + loaded.own_val_split + " split)" : std::string())
        << " is evaluated " << when_tested(e) << "\n";
  else
    log << "data: no validation split (data.val_fraction = 0): the test set is evaluated " << every(e.train.eval_every)
        << " and monitored\n";
}

}  // namespace plugtrain
