// optimium-compile: a thin main() over the tooling library (see CompileModel.h).
#include "tools/CompileModel.h"

int main(int argc, char **argv) { return optimium::tools::compileModelMain(argc, argv); }
