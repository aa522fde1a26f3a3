// An ordinary shared library: no plugtrain handshake.
extern "C" __attribute__((visibility("default"))) int add_numbers(int a, int b) { return a + b; }
