// The interactive shell's line input: editing keys and history through libedit when the
// input is a terminal and the library is there, plain lines otherwise. libedit is loaded
// when the shell starts (dlopen), so that no other command pays for it at start-up.
#pragma once

#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace lancelet {

class LineEditor {
 public:
  // `history_path`: where history is read from at start and saved to at the end (empty:
  // none). With `edit` false, or without libedit, lines come from `in` and the prompt
  // goes to `prompt_out`.
  LineEditor(std::istream& in, std::ostream& prompt_out, bool edit, std::string history_path);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // The next line without its newline; nullopt at the end of the input.
  std::optional<std::string> ReadLine(const std::string& prompt);
  // Adds an entry that the up arrow brings back (a whole statement, or a dot command).
  void AddHistory(const std::string& entry);
  // After a signal cut ReadLine short: the input can be read again.
  void Interrupted();

  // The tab key's candidates for the word at [start, end) of the line being edited (with
  // libedit only). One editor completes at a time: the last one given a completer.
  using Completer = std::function<std::vector<std::string>(const std::string& line, size_t start, size_t end)>;
  void SetCompleter(Completer completer);

 private:
  struct Library;
  std::istream& in_;
  std::ostream& prompt_out_;
  std::string history_path_;
  std::unique_ptr<Library> lib_;
};

}  // namespace lancelet
