#include "memfit/chat/chat_template.h"

#include "ast.h"
#include "evaluator.h"
#include "parser.h"

namespace memfit::chat {

Result<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  return capture([&] {
    ChatTemplate t;
    t.body_ = std::make_shared<const Body>(parse_template(source));
    return t;
  });
}

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& context, const RenderLimits& limits) const {
  return capture([&]() -> std::string {
    if (!context.is_object())
      throw Error(ErrorCode::kInvalidArgument, "chat template context: expected a JSON object, got " +
                                                   std::string(context.type_name()));
    Value root = from_json(context);
    Evaluator evaluator(limits, root.as_dict());
    return evaluator.run(*body_);
  });
}

Result<std::string> render_chat(std::string_view template_text, const nlohmann::ordered_json& messages,
                                bool add_generation_prompt, const nlohmann::ordered_json& extra,
                                const RenderLimits& limits) {
  if (!messages.is_array())
    return Error(ErrorCode::kInvalidArgument, "chat messages: expected a JSON list, got " + std::string(messages.type_name()));
  if (!extra.is_object())
    return Error(ErrorCode::kInvalidArgument, "chat template variables: expected a JSON object, got " +
                                                  std::string(extra.type_name()));
  for (const char* reserved : {"messages", "add_generation_prompt"})
    if (extra.contains(reserved))
      return Error(ErrorCode::kInvalidArgument, std::string("chat template variables: '") + reserved +
                                                    "' is set by the chat itself and cannot be passed again");
  // transformers: render(messages=…, tools=…, documents=…, add_generation_prompt=…, **kwargs),
  // tools and documents None unless given.
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
  context["messages"] = messages;
  context["tools"] = nullptr;
  context["documents"] = nullptr;
  context["add_generation_prompt"] = add_generation_prompt;
  for (const auto& [k, v] : extra.items()) context[k] = v;
  Result<ChatTemplate> parsed = ChatTemplate::parse(template_text);
  if (!parsed) return parsed.error();
  return parsed->render(context, limits);
}

Result<std::string> chat_template_of(const nlohmann::ordered_json& tokenizer_config, bool with_tools) {
  if (!tokenizer_config.is_object() || !tokenizer_config.contains("chat_template") ||
      tokenizer_config["chat_template"].is_null())
    return Error(ErrorCode::kMissingKey, "tokenizer_config.json has no chat_template");
  const auto& t = tokenizer_config["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  if (!t.is_array())
    return Error(ErrorCode::kWrongType, "tokenizer_config.json: chat_template must be a string or a list of "
                                        "{\"name\", \"template\"}, got " + std::string(t.type_name()));
  const nlohmann::ordered_json* chosen = nullptr;
  for (const auto& entry : t) {
    if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
        !entry["name"].is_string() || !entry["template"].is_string())
      return Error(ErrorCode::kWrongType, "tokenizer_config.json: each chat_template entry needs string "
                                          "\"name\" and \"template\"");
    const std::string name = entry["name"].get<std::string>();
    if ((with_tools && name == "tool_use") || (!chosen && name == "default")) chosen = &entry;
  }
  if (!chosen)
    return Error(ErrorCode::kMissingKey, "tokenizer_config.json: chat_template lists no \"default\" template");
  return (*chosen)["template"].get<std::string>();
}

nlohmann::ordered_json special_tokens_context(const nlohmann::ordered_json& tokenizer_config) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  if (!tokenizer_config.is_object()) return out;
  auto text_of = [](const nlohmann::ordered_json& token) -> nlohmann::ordered_json {
    if (token.is_string()) return token;
    if (token.is_object() && token.contains("content") && token["content"].is_string()) return token["content"];
    return nullptr;
  };
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    if (!tokenizer_config.contains(key)) continue;
    nlohmann::ordered_json text = text_of(tokenizer_config[key]);
    if (!text.is_null()) out[key] = text;
  }
  if (tokenizer_config.contains("additional_special_tokens") && tokenizer_config["additional_special_tokens"].is_array()) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& token : tokenizer_config["additional_special_tokens"]) {
      nlohmann::ordered_json text = text_of(token);
      if (!text.is_null()) list.push_back(text);
    }
    out["additional_special_tokens"] = list;
  }
  return out;
}

}  // namespace memfit::chat
