#include "curl_library.h"

#include <dlfcn.h>

#include <mutex>

namespace memfit::hub {
namespace {

// The soname of Debian's libcurl4 (and of every libcurl since 7.16): the ABI memfit was built for.
constexpr const char* kSoname = "libcurl.so.4";

struct Loaded {
  CurlLibrary api{};
  bool ok = false;
  std::string why;
};

template <typename Fn>
bool bind(void* lib, const char* name, Fn& out, std::string& why) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!out) why = std::string(kSoname) + " has no " + name;
  return out != nullptr;
}

Loaded load() {
  Loaded l;
  // Never closed: the library lives as long as the process, like a linked one.
  void* lib = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    l.why = std::string("libcurl could not be loaded (") + (e ? e : kSoname) +
            "); install it (Debian: apt-get install libcurl4) to read the Hub";
    return l;
  }
  decltype(&::curl_global_init) global_init = nullptr;
  CurlLibrary& a = l.api;
  l.ok = bind(lib, "curl_global_init", global_init, l.why) && bind(lib, "curl_easy_init", a.easy_init, l.why) &&
         bind(lib, "curl_easy_setopt", a.easy_setopt, l.why) &&
         bind(lib, "curl_easy_getinfo", a.easy_getinfo, l.why) &&
         bind(lib, "curl_easy_perform", a.easy_perform, l.why) &&
         bind(lib, "curl_easy_cleanup", a.easy_cleanup, l.why) &&
         bind(lib, "curl_easy_strerror", a.easy_strerror, l.why) &&
         bind(lib, "curl_slist_append", a.slist_append, l.why) &&
         bind(lib, "curl_slist_free_all", a.slist_free_all, l.why);
  if (l.ok && global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    l.ok = false;
    l.why = "libcurl's global initialisation failed";
  }
  return l;
}

}  // namespace

const CurlLibrary* curl_library(std::string* why) {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.ok && why) *why = loaded.why;
  return loaded.ok ? &loaded.api : nullptr;
}

}  // namespace memfit::hub
