// optimium-encrypt: a thin main() over the tooling library (see EncryptModel.h).
#include "tools/EncryptModel.h"

int main(int argc, char **argv) { return optimium::tools::encryptModelMain(argc, argv); }
