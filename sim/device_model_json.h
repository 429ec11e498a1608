#pragma once
// Writes a DeviceModel as a device file that parse_device_model reads back
// (the format of assets/devices/*.json): every number with its "<key>_source".

#include <map>
#include <string>

#include "core/common/status.h"
#include "sim/device_model.h"

namespace sl::sim {

// Where each number comes from, keyed by its path in the file: "hbm_efficiency",
// "gemm_efficiency.values", "nccl_protocols.LL.base_latency_us".
using DeviceSources = std::map<std::string, std::string>;

// The "<key>_source" strings of a device file (e.g. the base model's, from
// DeviceModel::file); empty when the file cannot be read.
DeviceSources read_device_sources(const std::string& path);

// The device file text. Numbers without an entry in `sources` say they were
// copied from the model's file (or its name).
std::string device_model_json(const DeviceModel& model, const DeviceSources& sources);

Status write_device_model(const DeviceModel& model, const DeviceSources& sources, const std::string& path);

}  // namespace sl::sim
