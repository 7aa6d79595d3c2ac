#pragma once

#include <CLI/CLI.hpp>

namespace allot::cli {

// login, submit, jobs, describe, explain, cancel, quota, usage, tenants, nodes, audit list,
// tokens, reserve, reservations, availability, calendar: allotd's API client, in this order.
void AddClientCommands(CLI::App& app);

// The verb groups AddClientCommands adds, one file each.
void AddLoginCommand(CLI::App& app);    // access_commands.cc
void AddJobCommands(CLI::App& app);     // job_commands.cc: submit, jobs, describe, explain, cancel
void AddTenantCommands(CLI::App& app);  // tenant_commands.cc: quota, usage, tenants
void AddNodeCommands(CLI::App& app);    // node_commands.cc: nodes
void AddTokenCommands(CLI::App& app);   // access_commands.cc: audit list, tokens
void AddReservationCommands(CLI::App& app);  // reservation_commands.cc: reserve, reservations, availability, calendar
void AddKeyCommands(CLI::App& app);     // key_commands.cc: keys (list, add, remove)
void AddServiceCommands(CLI::App& app); // service_commands.cc: services (list, show, delete, update, rollback, scale)
void AddTemplateCommands(CLI::App& app);  // template_commands.cc: templates (list, create, show, delete)

}  // namespace allot::cli
