// reshard: the command line. Everything is in the table of commands
// (cli/commands.h) and its runner (cli/command_runner.h).
#include <string>
#include <vector>

#include "cli/command_runner.h"

int main(int argc, char** argv) {
  return reshard::RunReshard(std::vector<std::string>(argv + 1, argv + argc));
}
