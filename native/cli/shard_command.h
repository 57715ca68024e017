// native/cli/shard_command.h — `memfit shard IN OUT --max-shard-size 5GB`: (re)shard a checkpoint
// into safetensors the way transformers' save_pretrained does, from safetensors or .bin.
//
// Sharding is transformers 4.40's shard_checkpoint: greedy in state-dict order, a new shard when
// the next tensor would push the current one over the maximum (a tensor larger than the maximum
// gets a shard of its own). Files: `model.safetensors` when one shard is enough, else
// `model-0000i-of-0000N.safetensors` + `model.safetensors.index.json`
// (`json.dumps(index, indent=2, sort_keys=True) + "\n"`). Inside a file the tensors are laid out
// as safetensors writes them: by dtype (descending), then name; `{"format":"pt"}` metadata.
//
// State-dict order: a .bin's pickle order. A safetensors file stores names sorted, which is not
// the model's order, so when a config.json sits beside the checkpoint memfit rebuilds the model's
// tensor tree and uses its state_dict() order (`--order config`); otherwise the files' order.
//
// Tied weights: a .bin tensor that views exactly the same bytes as an earlier one (GPT-2's
// lm_head.weight = transformer.wte.weight) is written once, under the first name, and the alias
// is dropped — what save_pretrained does (transformers re-ties it on load). Other views that share
// a storage are written as separate tensors. Non-contiguous views are materialised in C order.
//
// Bytes are streamed in bounded chunks (never a whole tensor or shard in memory). Output is
// atomic: everything goes into a sibling `OUT.tmp-XXXXXX`, fsync'ed, then renamed to OUT; on any
// error the temporary folder is removed and OUT does not exist. OUT must not exist already (an
// empty folder is accepted). config.json / generation_config.json beside the input are copied.
#pragma once

#include <string>

namespace memfit::cli {

struct ShardArgs {
  std::string input;             // .safetensors | .bin | index.json | folder
  std::string output;            // the folder to create
  std::string max_shard_size = "5GB";  // transformers' convert_file_size_to_int syntax
  std::string order = "auto";    // auto | config | checkpoint
  bool json = false;
};

int run_shard(const ShardArgs& args);

}  // namespace memfit::cli
