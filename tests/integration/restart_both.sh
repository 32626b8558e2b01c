#!/usr/bin/env bash
# Hitless daemon restart, second half (restart.sh): both daemons killed
# (-9) at once for SR, EC and AUTO, and a planned (SIGTERM) restart.
SDR_RESTART_SET=both exec bash "$(dirname "$0")/restart.sh"
