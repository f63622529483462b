#include "sql/line_editor.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace lancelet {

// libedit's readline-compatible entry points, resolved at run time.
struct LineEditor::Library {
  void* handle = nullptr;
  char* (*readline)(const char*) = nullptr;
  int (*add_history)(const char*) = nullptr;
  int (*read_history)(const char*) = nullptr;
  int (*write_history)(const char*) = nullptr;
  void (*using_history)() = nullptr;
  // Completion, optional: readline's variables (their addresses) and matcher.
  using AttemptFn = char** (*)(const char*, int, int);
  using GenerateFn = char* (*)(const char*, int);
  AttemptFn* attempted_completion_function = nullptr;
  int* attempted_completion_over = nullptr;
  char** line_buffer = nullptr;
  char** (*completion_matches)(const char*, GenerateFn) = nullptr;

  static std::unique_ptr<Library> Load() {
    for (const char* name : {"libedit.so.2", "libedit.so"}) {
      void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (!handle) continue;
      auto lib = std::make_unique<Library>();
      lib->handle = handle;
      lib->readline = reinterpret_cast<char* (*)(const char*)>(dlsym(handle, "readline"));
      lib->add_history = reinterpret_cast<int (*)(const char*)>(dlsym(handle, "add_history"));
      lib->read_history = reinterpret_cast<int (*)(const char*)>(dlsym(handle, "read_history"));
      lib->write_history = reinterpret_cast<int (*)(const char*)>(dlsym(handle, "write_history"));
      lib->using_history = reinterpret_cast<void (*)()>(dlsym(handle, "using_history"));
      lib->attempted_completion_function = reinterpret_cast<AttemptFn*>(dlsym(handle, "rl_attempted_completion_function"));
      lib->attempted_completion_over = reinterpret_cast<int*>(dlsym(handle, "rl_attempted_completion_over"));
      lib->line_buffer = reinterpret_cast<char**>(dlsym(handle, "rl_line_buffer"));
      lib->completion_matches =
          reinterpret_cast<char** (*)(const char*, GenerateFn)>(dlsym(handle, "rl_completion_matches"));
      if (lib->readline && lib->add_history && lib->read_history && lib->write_history && lib->using_history)
        return lib;
      dlclose(handle);
    }
    return nullptr;
  }
};

namespace {

// The completing editor's state, for libedit's C callbacks.
struct Completion {
  LineEditor::Completer completer;
  std::vector<std::string> candidates;
  size_t next = 0;
};
Completion& ActiveCompletion() {
  static Completion completion;
  return completion;
}

char* NextCandidate(const char*, int state) {
  Completion& c = ActiveCompletion();
  if (state == 0) c.next = 0;
  if (c.next >= c.candidates.size()) return nullptr;
  return strdup(c.candidates[c.next++].c_str());  // libedit frees it
}

}  // namespace

LineEditor::LineEditor(std::istream& in, std::ostream& prompt_out, bool edit, std::string history_path)
    : in_(in), prompt_out_(prompt_out), history_path_(std::move(history_path)) {
  if (!edit) return;
  lib_ = Library::Load();
  if (!lib_) return;
  lib_->using_history();
  if (!history_path_.empty()) lib_->read_history(history_path_.c_str());  // absent at first: fine
}

LineEditor::~LineEditor() {
  if (!lib_) return;
  if (lib_->attempted_completion_function) *lib_->attempted_completion_function = nullptr;
  if (!history_path_.empty()) lib_->write_history(history_path_.c_str());
  // The library stays loaded: it may keep terminal state until the process ends.
}

std::optional<std::string> LineEditor::ReadLine(const std::string& prompt) {
  if (lib_) {
    char* line = lib_->readline(prompt.c_str());
    if (!line) return std::nullopt;
    std::string out(line);
    std::free(line);
    return out;
  }
  prompt_out_ << prompt << std::flush;
  std::string line;
  if (!std::getline(in_, line)) return std::nullopt;
  return line;
}

void LineEditor::Interrupted() {
  in_.clear();  // getline failed on the interrupted read
  if (&in_ == &std::cin) std::clearerr(stdin);
}

void LineEditor::SetCompleter(Completer completer) {
  if (!lib_ || !lib_->attempted_completion_function || !lib_->attempted_completion_over || !lib_->line_buffer ||
      !lib_->completion_matches)
    return;
  Completion& c = ActiveCompletion();
  c.completer = std::move(completer);
  static const Library* library = nullptr;  // the one the callback reads the line from
  library = lib_.get();
  *lib_->attempted_completion_function = [](const char* text, int start, int end) -> char** {
    *library->attempted_completion_over = 1;  // no file names when there is no candidate
    Completion& active = ActiveCompletion();
    const char* line = *library->line_buffer;
    active.candidates = active.completer(line ? line : "", size_t(start), size_t(end));
    if (active.candidates.empty()) return nullptr;
    return library->completion_matches(text, NextCandidate);
  };
}

void LineEditor::AddHistory(const std::string& entry) {
  if (lib_ && !entry.empty()) lib_->add_history(entry.c_str());
}

}  // namespace lancelet
