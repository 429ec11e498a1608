#pragma once
// The store's schema (schema.sql, embedded into the binary at build time).

#include <cstdint>

namespace sl::trace::store {

// Bump when the schema changes; a file with a larger version is refused.
constexpr int64_t kSchemaVersion = 2;
// Written to meta('application') so foreign SQLite files are recognised.
constexpr const char* kApplicationId = "streamlens";

extern const char* const kSchemaSql;

}  // namespace sl::trace::store
