// A fixture for scripts/function_lengths.py: braces in comments {, strings and characters
// do not count, and a lambda counts towards the function around it.
namespace demo {

class Widget {
 public:
  int Short() const { return 1; }
  int Long() const {
    int a = 0;
    a += 1;
    a += 2;
    a += 3;
    a += 4;
    return a;
  }
};

int Braces(const char* s) {
  const char* t = "{{{";
  char c = '{';
  auto f = [] { return 2; };
  /* } */
  return t[0] + c + f() + (s ? 1 : 0);
}

}  // namespace demo
