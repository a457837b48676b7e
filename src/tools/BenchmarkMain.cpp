// optimium-benchmark: a thin main() over the tooling library (see Benchmark.h).
#include "tools/Benchmark.h"

int main(int argc, char **argv) { return optimium::tools::benchmarkMain(argc, argv); }
