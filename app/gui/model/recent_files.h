#pragma once
// The File menu's recent databases, kept in $XDG_CONFIG_HOME/streamlens/
// recent_databases (or ~/.config/...). Interactive sessions only: headless
// runs never write it.

#include <string>
#include <vector>

namespace sl::gui {

std::string recent_files_path();  // empty when neither XDG_CONFIG_HOME nor HOME is set
std::vector<std::string> load_recent_files(const std::string& path);
void save_recent_files(const std::string& path, const std::vector<std::string>& files);

}  // namespace sl::gui

namespace sl::gui {

// The database to open when none is named: `streamlens.db` in `dir` when
// it exists, else the most recent one that still exists; "" for none.
std::string startup_database(const std::string& dir, const std::vector<std::string>& recent);

}  // namespace sl::gui
