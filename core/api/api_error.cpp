// error_reply in a file of its own: the text module (core/text/text_api.cpp) answers errors the
// same way without linking the estimate.
#include "api_common.h"

namespace memfit::api {

// (Replies are built key by key, not from initializer lists: smaller code in the WebAssembly module.)
std::string error_reply(const Error& e) {
  Json reply;
  Json& error = reply["error"];
  error["code"] = std::string(error_code_name(e.code()));
  error["message"] = e.message();
  return reply.dump();
}

}  // namespace memfit::api
