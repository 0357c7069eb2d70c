#!/usr/bin/env bash
# docs/deploy.md, run on one machine: a PostgreSQL 15 primary and its streaming replica, PgBouncer
# in transaction mode, Redis, the env file, migrations, the first catalogue and key, and two
# instances of the service under a supervisor, everything under one directory on free ports.
#
#   scripts/deploy-local.sh start DIR [NAME=VALUE …]   extra settings are appended to the env file
#   scripts/deploy-local.sh stop DIR                    stops everything started; leaves DIR's files
#
# Needs Debian's postgresql-15, pgbouncer and redis-server (.ci/run installs them) and a built
# checkout (dist/). Run as root, PostgreSQL and PgBouncer run as the `postgres` OS user.
#
# Every line of the guide's ```bash blocks is a line of this script, as written there
# (test/unit/deploy-guide.test.ts): the guide's commands use the variables set in `settings`
# below, which hold production paths in the guide and paths under DIR here. Where this script
# differs from a real machine (no systemd: `supervise` runs the unit's ExecStart with its env file
# in a restart loop; files rewritten for DIR's ports and paths), it says so.
set -euo pipefail

APP_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PGBIN=/usr/lib/postgresql/15/bin
PGBOUNCER_BIN=/usr/sbin/pgbouncer
REDIS_BIN=/usr/bin/redis-server
INSTANCES=2

die() { echo "deploy-local: $*" >&2; exit 1; }

# The layout under DIR, the guide's variables among them.
settings() {
  DIR="$(mkdir -p "$1" && cd "$1" && pwd)"
  PRIMARY_DATA="$DIR/primary"
  REPLICA_DATA="$DIR/replica"
  PGBOUNCER_DIR="$DIR/pgbouncer"
  ETC="$DIR/etc"
  LOGS="$DIR/logs"
  RUN="$DIR/run"
  if [ "$(id -u)" = 0 ]; then AS_PG="runuser -u postgres --"; else AS_PG=""; fi
}

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# KEY=value in the env file, replaced where the example has it, else appended.
set_env() {
  local key=${1%%=*} value=${1#*=}
  if grep -q "^$key=" "$ETC/env"; then sed -i "s|^$key=.*|$key=$value|" "$ETC/env"; else echo "$key=$value" >>"$ETC/env"; fi
}

# What the unit file runs, from the unit file itself: the supervisor runs exactly that.
exec_start() { sed -n 's/^ExecStart=//p' "$APP_DIR/docs/deploy/marketplace-api.service"; }

wait_ready() {
  local port=$1 deadline=$((SECONDS + 90))
  until curl -fs -o /dev/null "http://127.0.0.1:$port/readyz"; do
    [ $SECONDS -lt $deadline ] || die "the instance on port $port is not ready after 90 s (see $LOGS/instance-$port.log)"
    sleep 0.5
  done
}

start() {
  settings "$1"
  shift
  for bin in "$PGBIN/initdb" "$PGBIN/pg_ctl" "$PGBIN/pg_basebackup" "$PGBIN/psql" "$PGBOUNCER_BIN" "$REDIS_BIN"; do
    [ -x "$bin" ] || die "missing $bin (Debian packages postgresql-15, pgbouncer, redis-server)"
  done
  [ -f "$APP_DIR/dist/server.js" ] || die "build the service first (npm run build)"
  [ ! -e "$PRIMARY_DATA" ] || die "$DIR already holds a deployment: stop it and remove the directory first"
  mkdir -p "$ETC" "$LOGS" "$RUN" "$PGBOUNCER_DIR"
  chmod 0755 "$DIR"
  if [ -n "$AS_PG" ]; then chown postgres: "$DIR" "$PGBOUNCER_DIR"; fi

  PRIMARY_PORT=$(free_port)
  REPLICA_PORT=$(free_port)
  PGBOUNCER_PORT=$(free_port)
  REDIS_PORT=$(free_port)
  APP_PASSWORD=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  REPLICATION_PASSWORD=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')

  # ---- 1. The primary (the guide: step 1).
  $AS_PG "$PGBIN/initdb" -D "$PRIMARY_DATA" -U postgres -E UTF8 --auth-local=trust --auth-host=scram-sha-256
  cat >>"$PRIMARY_DATA/postgresql.conf" <<EOF
port = $PRIMARY_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PRIMARY_DATA'
wal_level = replica
max_wal_senders = 5
EOF
  $AS_PG "$PGBIN/pg_ctl" -D "$PRIMARY_DATA" -l "$PRIMARY_DATA/server.log" -w start

  # ---- 2. The role and the database.
  $AS_PG "$PGBIN/psql" -h "$PRIMARY_DATA" -p "$PRIMARY_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 \
    -v app_password="$APP_PASSWORD" -v replication_password="$REPLICATION_PASSWORD" <<'SQL'
SET password_encryption = 'scram-sha-256';
CREATE ROLE marketplace LOGIN PASSWORD :'app_password';
CREATE DATABASE marketplace OWNER marketplace;
CREATE ROLE replicator LOGIN REPLICATION PASSWORD :'replication_password';
SQL

  # ---- 3. The streaming replica.
  $AS_PG env PGPASSWORD="$REPLICATION_PASSWORD" "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U replicator -D "$REPLICA_DATA" -R -X stream -c fast
  # Here only: the copy's port and socket directory are the primary's, on the same machine.
  cat >>"$REPLICA_DATA/postgresql.conf" <<EOF
port = $REPLICA_PORT
unix_socket_directories = '$REPLICA_DATA'
EOF
  $AS_PG "$PGBIN/pg_ctl" -D "$REPLICA_DATA" -l "$REPLICA_DATA/server.log" -w start

  # ---- 4. PgBouncer in transaction mode: the example file, rewritten for DIR's ports and paths.
  sed -e "s|port=5432|port=$PRIMARY_PORT|" -e "s|^listen_port = .*|listen_port = $PGBOUNCER_PORT|" \
    -e "s|/etc/pgbouncer/|$PGBOUNCER_DIR/|" -e "s|^logfile = .*|logfile = $PGBOUNCER_DIR/pgbouncer.log|" \
    -e "s|^pidfile = .*|pidfile = $PGBOUNCER_DIR/pgbouncer.pid|" \
    "$APP_DIR/docs/deploy/pgbouncer.ini" >"$PGBOUNCER_DIR/pgbouncer.ini"
  $AS_PG "$PGBIN/psql" -h "$PRIMARY_DATA" -p "$PRIMARY_PORT" -U postgres -d postgres -At -c "SELECT format('\"%s\" \"%s\"', rolname, rolpassword) FROM pg_authid WHERE rolname = 'marketplace'" >"$PGBOUNCER_DIR/userlist.txt"
  chmod 0600 "$PGBOUNCER_DIR/userlist.txt"
  if [ -n "$AS_PG" ]; then chown postgres: "$PGBOUNCER_DIR/pgbouncer.ini" "$PGBOUNCER_DIR/userlist.txt"; fi
  $AS_PG "$PGBOUNCER_BIN" -d "$PGBOUNCER_DIR/pgbouncer.ini"

  # ---- 5. Redis (Debian's package runs it as a service; here, on DIR's port, nothing kept on disk).
  "$REDIS_BIN" --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --save '' --appendonly no \
    --pidfile "$RUN/redis.pid" --logfile "$LOGS/redis.log" --dir "$RUN"

  # ---- 6. The env file: the example, with this machine's addresses and passwords.
  install -m 0600 "$APP_DIR/docs/deploy/env.example" "$ETC/env"
  set_env "DATABASE_URL=postgresql://marketplace:$APP_PASSWORD@127.0.0.1:$PGBOUNCER_PORT/marketplace"
  set_env "DATABASE_DIRECT_URL=postgresql://marketplace:$APP_PASSWORD@127.0.0.1:$PRIMARY_PORT/marketplace"
  set_env "DATABASE_READ_URLS=postgresql://marketplace:$APP_PASSWORD@127.0.0.1:$REPLICA_PORT/marketplace"
  set_env "REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
  set_env "PUBLIC_URL=http://127.0.0.1"
  for setting in "$@"; do set_env "$setting"; done

  # ---- 7. Migrations, the first catalogue and the first key: both URLs from the env file.
  cd "$APP_DIR"
  (
    set -a; . "$ETC/env"; set +a
    npm run seed
    npm run --silent keys -- create --owner ops@example.com --plan pro --scopes read:products,read:categories,read:suppliers,read:reviews,write:webhooks --json >"$ETC/first-key.json"
  )
  chmod 0600 "$ETC/first-key.json"

  # ---- 8. The instances, supervised: systemd runs the unit; here `supervise` runs its ExecStart.
  local ports=()
  for i in $(seq 1 "$INSTANCES"); do ports+=("$(free_port)"); done
  for port in "${ports[@]}"; do
    setsid nohup "$0" supervise "$DIR" "$port" >>"$LOGS/supervisor-$port.log" 2>&1 </dev/null &
    echo $! >"$RUN/supervisor-$port.pid"
  done
  for port in "${ports[@]}"; do wait_ready "$port"; done

  # What a test (or an operator) needs to reach it.
  cat >"$DIR/deployment.env" <<EOF
INSTANCE_PORTS="${ports[*]}"
PRIMARY_PORT=$PRIMARY_PORT
REPLICA_PORT=$REPLICA_PORT
PGBOUNCER_PORT=$PGBOUNCER_PORT
REDIS_PORT=$REDIS_PORT
EOF
  chmod 0600 "$DIR/deployment.env"
  echo "deploy-local: ready on ports ${ports[*]} (settings: $ETC/env, first key: $ETC/first-key.json)"
}

# The unit's ExecStart with the unit's EnvironmentFile and Environment=PORT=%i, restarted 2 s after
# it exits (Restart=always, RestartSec=2); SIGTERM is passed on and ends the loop once it exits.
supervise() {
  settings "$1"
  local port=$2 child="" stopping=""
  trap 'stopping=1; [ -z "$child" ] || kill -TERM "$child" 2>/dev/null || true' TERM INT
  while [ -z "$stopping" ]; do
    (
      cd "$APP_DIR"
      # As systemd runs it: the env file's settings and PORT, nothing of the caller's environment
      # but PATH; the unit's command line split on spaces, as systemd splits one without quotes.
      # shellcheck disable=SC2046
      exec env -i PATH="$PATH" $(grep -E '^[A-Z_][A-Z0-9_]*=' "$ETC/env") PORT="$port" $(exec_start)
    ) >>"$LOGS/instance-$port.log" 2>&1 &
    child=$!
    echo "$child" >"$RUN/instance-$port.pid"
    wait "$child" || true
    # A trapped signal ends the first wait early: wait for the instance to finish draining.
    wait "$child" 2>/dev/null || true
    [ -z "$stopping" ] || break
    echo "$(date -u +%FT%TZ) instance on port $port exited: restarting in 2 s"
    sleep 2
  done
  rm -f "$RUN/instance-$port.pid"
}

# Ends a process by its pid file and waits until it is gone.
stop_pid() {
  local file=$1 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if kill -TERM "$pid" 2>/dev/null; then
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

stop() {
  settings "$1"
  # Every instance drains at once (TERM to each supervisor first), then each is waited for.
  for file in "$RUN"/supervisor-*.pid; do [ -e "$file" ] && kill -TERM "$(cat "$file")" 2>/dev/null || true; done
  for file in "$RUN"/supervisor-*.pid; do [ -e "$file" ] && stop_pid "$file"; done
  # An instance whose supervisor was killed outright.
  for file in "$RUN"/instance-*.pid; do [ -e "$file" ] && stop_pid "$file"; done
  stop_pid "$RUN/redis.pid"
  stop_pid "$PGBOUNCER_DIR/pgbouncer.pid"
  for data in "$REPLICA_DATA" "$PRIMARY_DATA"; do
    if [ -f "$data/postmaster.pid" ]; then $AS_PG "$PGBIN/pg_ctl" -D "$data" -m fast -w stop || true; fi
  done
  echo "deploy-local: stopped (files kept in $DIR)"
}

case "${1:-}" in
  start) [ $# -ge 2 ] || die "usage: $0 start DIR [NAME=VALUE …]"; shift; start "$@" ;;
  stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
  supervise) supervise "$2" "$3" ;;
  *) die "usage: $0 start DIR [NAME=VALUE …] | stop DIR" ;;
esac
