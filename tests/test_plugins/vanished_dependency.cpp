// Built as libplugtrain_vanished.so in a folder the loader will not search.
extern "C" __attribute__((visibility("default"))) int vanished_answer() { return 42; }
