#pragma once

namespace CLI { class App; }

namespace allot::cli {

// Exit codes: 0 ok, 1 internal error, 2 bad input (usage, scenario).
void AddSimCommand(CLI::App& app);
int ExitCode();
// Sets the exit code a command's callback produced.
void SetExitCode(int code);

}  // namespace allot::cli
