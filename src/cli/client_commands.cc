// `allot`'s commands that talk to allotd, one file per verb group: login and tokens
// (access_commands.cc), jobs (job_commands.cc), tenants (tenant_commands.cc), nodes
// (node_commands.cc); the billing verbs are billing_commands.cc's. client.h is their plumbing.
#include "cli/client_commands.h"

namespace allot::cli {

void AddClientCommands(CLI::App& app) {
  AddLoginCommand(app);
  AddJobCommands(app);
  AddTenantCommands(app);
  AddNodeCommands(app);
  AddTokenCommands(app);  // and `audit list`
  AddReservationCommands(app);
  AddKeyCommands(app);
  AddServiceCommands(app);
  AddTemplateCommands(app);
}

}  // namespace allot::cli
