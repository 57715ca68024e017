// memfit/chat/chat_template.h — a model's chat template (tokenizer_config.json's `chat_template`,
// Jinja) rendered as transformers' apply_chat_template renders it: an ImmutableSandboxedEnvironment
// with trim_blocks and lstrip_blocks, the loopcontrols extension ({% break %}, {% continue %}),
// {% generation %}, and the globals raise_exception, strftime_now and the tojson filter with
// json.dumps' arguments. memfit implements the subset of Jinja that chat templates use
// (docs/chat-templates.md); anything else is a clear error, never a crash.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "memfit/error.h"

namespace memfit::chat {

// Caps that keep a hostile template from running away (kTemplateLimit when one is passed).
struct RenderLimits {
  std::size_t max_output_bytes = std::size_t{16} << 20;  // what render returns, and each string built
  std::uint64_t max_loop_iterations = 1'000'000;          // all for loops together, and range()'s size
  int max_call_depth = 64;                                // macros calling macros
};

struct Stmt;

// A parsed template: parse once, render many times.
class ChatTemplate {
 public:
  // kTemplateSyntax with "chat template line L, column C: expected …, got …".
  static Result<ChatTemplate> parse(std::string_view source);
  // `context` is a JSON object of the template's variables (key order kept: Python dicts keep it,
  // and tojson/items() show it). kTemplateRender / kTemplateLimit on failure.
  Result<std::string> render(const nlohmann::ordered_json& context, const RenderLimits& limits = {}) const;

 private:
  std::shared_ptr<const std::vector<std::unique_ptr<Stmt>>> body_;
};

// apply_chat_template's variables: messages, add_generation_prompt, tools and documents (None
// unless `extra` gives them), and `extra` (bos_token, eos_token, enable_thinking, …: what
// special_tokens_context returns, plus any template kwargs). kInvalidArgument if messages is not
// a list or extra not an object, or extra names messages / add_generation_prompt.
Result<std::string> render_chat(std::string_view template_text, const nlohmann::ordered_json& messages,
                                bool add_generation_prompt,
                                const nlohmann::ordered_json& extra = nlohmann::ordered_json::object(),
                                const RenderLimits& limits = {});

// tokenizer_config.json's chat_template: a string, or a list of {"name", "template"} from which
// transformers picks "tool_use" when tools are given (if present), else "default".
// kMissingKey when there is none, kWrongType when it is neither form.
Result<std::string> chat_template_of(const nlohmann::ordered_json& tokenizer_config, bool with_tools = false);

// The special tokens transformers passes to every template (its special_tokens_map): bos_token,
// eos_token, unk_token, pad_token, sep_token, cls_token, mask_token as strings (an AddedToken
// object's "content"), additional_special_tokens as a list. Absent keys are left out.
nlohmann::ordered_json special_tokens_context(const nlohmann::ordered_json& tokenizer_config);

}  // namespace memfit::chat
