#include "cli/cli.h"

int main(int argc, char** argv) { return lancelet::cli::Main(argc, argv); }
