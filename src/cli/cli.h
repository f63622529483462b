#pragma once
namespace lancelet::cli { int Main(int argc, char** argv); }
