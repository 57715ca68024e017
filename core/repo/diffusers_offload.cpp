// model_cpu_offload_seq and _exclude_from_cpu_offload, the class attributes diffusers' offload
// modes read (pipelines/pipeline_utils.py), for the Stable Diffusion, SDXL, SD3 and FLUX
// pipelines as diffusers' pipeline files set them. The peak of enable_model_cpu_offload does not
// depend on the order, only on which components are in the sequence and which are excluded.
#include <algorithm>
#include <cstring>

#include "diffusers_parts.h"

namespace memfit::repo::diffusers {
namespace {

struct KnownPipelines {
  const char* sequence;  // "a->b->c"
  const char* excluded;  // "" or a comma-separated list
  std::vector<const char*> classes;
};

const std::vector<KnownPipelines>& known() {
  static const std::vector<KnownPipelines> table = {
      {"text_encoder->image_encoder->unet->vae", "safety_checker",
       {"StableDiffusionPipeline", "StableDiffusionImg2ImgPipeline", "StableDiffusionInpaintPipeline",
        "StableDiffusionControlNetPipeline", "StableDiffusionControlNetInpaintPipeline",
        "StableDiffusionPAGPipeline"}},
      {"text_encoder->unet->vae", "safety_checker",
       {"StableDiffusionControlNetImg2ImgPipeline", "StableDiffusionInstructPix2PixPipeline",
        "StableDiffusionUpscalePipeline"}},
      {"text_encoder->unet->vae", "", {"StableDiffusionDepth2ImgPipeline", "StableDiffusionLatentUpscalePipeline"}},
      {"image_encoder->unet->vae", "safety_checker", {"StableDiffusionImageVariationPipeline"}},
      {"text_encoder->text_encoder_2->image_encoder->unet->vae", "",
       {"StableDiffusionXLPipeline", "StableDiffusionXLImg2ImgPipeline", "StableDiffusionXLInpaintPipeline",
        "StableDiffusionXLControlNetPipeline", "StableDiffusionXLControlNetImg2ImgPipeline",
        "StableDiffusionXLAdapterPipeline", "StableDiffusionXLPAGPipeline"}},
      {"text_encoder->text_encoder_2->unet->vae", "",
       {"StableDiffusionXLInstructPix2PixPipeline", "StableDiffusionXLControlNetInpaintPipeline"}},
      {"text_encoder->text_encoder_2->text_encoder_3->image_encoder->transformer->vae", "",
       {"StableDiffusion3Pipeline", "StableDiffusion3Img2ImgPipeline", "StableDiffusion3InpaintPipeline",
        "StableDiffusion3ControlNetPipeline", "StableDiffusion3ControlNetInpaintingPipeline"}},
      {"text_encoder->text_encoder_2->text_encoder_3->transformer->vae", "", {"StableDiffusion3PAGPipeline"}},
      {"text_encoder->text_encoder_2->image_encoder->transformer->vae", "",
       {"FluxPipeline", "FluxImg2ImgPipeline", "FluxInpaintPipeline", "FluxKontextPipeline",
        "FluxControlNetPipeline"}},
      {"text_encoder->text_encoder_2->transformer->vae", "",
       {"FluxFillPipeline", "FluxControlPipeline", "FluxControlImg2ImgPipeline", "FluxControlInpaintPipeline",
        "FluxControlNetImg2ImgPipeline", "FluxControlNetInpaintPipeline"}},
      {"text_encoder->transformer->vae", "", {"Flux2Pipeline", "Flux2KleinPipeline"}},
  };
  return table;
}

std::vector<std::string> split(const char* text, const char* sep) {
  std::vector<std::string> out;
  std::string s(text);
  const std::size_t n = std::strlen(sep);
  std::size_t at = 0;
  while (!s.empty() && at <= s.size()) {
    const std::size_t end = std::min(s.find(sep, at), s.size());
    out.push_back(s.substr(at, end - at));
    at = end + n;
  }
  return out;
}

}  // namespace

OffloadPolicy offload_policy(const std::string& pipeline_class,
                             const std::vector<std::string>& model_components) {
  for (const auto& k : known())
    for (const char* c : k.classes)
      if (pipeline_class == c) return {split(k.sequence, "->"), split(k.excluded, ","), true};
  return {model_components, {}, false};
}

}  // namespace memfit::repo::diffusers
