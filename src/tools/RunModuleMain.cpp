// optimium-run: a thin main() over the tooling library (see RunModule.h).
#include "tools/RunModule.h"

int main(int argc, char **argv) { return optimium::tools::runModuleMain(argc, argv); }
