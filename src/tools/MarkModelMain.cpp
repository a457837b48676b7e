// optimium-mark: a thin main() over the tooling library (see MarkModel.h).
#include "tools/MarkModel.h"

int main(int argc, char **argv) { return optimium::tools::markModelMain(argc, argv); }
