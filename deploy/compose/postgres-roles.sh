#!/bin/sh
# PostgreSQL's image runs this once, when its data volume is empty
# (/docker-entrypoint-initdb.d): one role per service and job, each limited to its
# own schema, so that a compromised app reaches only its own tables.
#
#   mcpgw_gateway_owner     owns schema gateway: its migrations (DDL)
#   mcpgw_gateway           the gateway and the admin CLI: rows of schema gateway, and in schema
#                           audit (the audit trail) SELECT and INSERT only: append-only
#   mcpgw_messaging_owner   owns schema messaging: its migrations (DDL)
#   mcpgw_messaging         the message service: rows of schema messaging only
#
# Nobody else may connect to the database or create anything in schema public; the
# superuser (POSTGRES_PASSWORD) is for the operator, not for an app. Passwords come from
# .env (docker-compose.yml passes them); on a volume made before this script, run it by
# hand: docker compose exec postgres sh /docker-entrypoint-initdb.d/10-roles.sh
set -eu
for name in GATEWAY_DB_OWNER_PASSWORD GATEWAY_DB_PASSWORD MESSAGING_DB_OWNER_PASSWORD MESSAGING_DB_PASSWORD; do
  eval "value=\${$name:-}"
  if [ -z "$value" ]; then
    echo "postgres-roles.sh: $name is not set (see .env.example)" >&2
    exit 1
  fi
done

psql -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-mcpgw}" \
  --set=dbname="${POSTGRES_DB:-mcpgw}" \
  --set=gateway_owner_password="$GATEWAY_DB_OWNER_PASSWORD" \
  --set=gateway_password="$GATEWAY_DB_PASSWORD" \
  --set=messaging_owner_password="$MESSAGING_DB_OWNER_PASSWORD" \
  --set=messaging_password="$MESSAGING_DB_PASSWORD" <<'SQL'
REVOKE ALL ON DATABASE :"dbname" FROM PUBLIC;
REVOKE ALL ON SCHEMA public FROM PUBLIC;

CREATE ROLE mcpgw_gateway_owner LOGIN PASSWORD :'gateway_owner_password';
CREATE ROLE mcpgw_gateway LOGIN PASSWORD :'gateway_password';
CREATE ROLE mcpgw_messaging_owner LOGIN PASSWORD :'messaging_owner_password';
CREATE ROLE mcpgw_messaging LOGIN PASSWORD :'messaging_password';
GRANT CONNECT, TEMPORARY ON DATABASE :"dbname"
  TO mcpgw_gateway_owner, mcpgw_gateway, mcpgw_messaging_owner, mcpgw_messaging;

CREATE SCHEMA gateway AUTHORIZATION mcpgw_gateway_owner;
GRANT USAGE ON SCHEMA gateway TO mcpgw_gateway;
ALTER DEFAULT PRIVILEGES FOR ROLE mcpgw_gateway_owner IN SCHEMA gateway
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO mcpgw_gateway;
ALTER DEFAULT PRIVILEGES FOR ROLE mcpgw_gateway_owner IN SCHEMA gateway
  GRANT USAGE, SELECT ON SEQUENCES TO mcpgw_gateway;

CREATE SCHEMA audit AUTHORIZATION mcpgw_gateway_owner;
GRANT USAGE ON SCHEMA audit TO mcpgw_gateway;
ALTER DEFAULT PRIVILEGES FOR ROLE mcpgw_gateway_owner IN SCHEMA audit
  GRANT SELECT, INSERT ON TABLES TO mcpgw_gateway;

CREATE SCHEMA messaging AUTHORIZATION mcpgw_messaging_owner;
GRANT USAGE ON SCHEMA messaging TO mcpgw_messaging;
ALTER DEFAULT PRIVILEGES FOR ROLE mcpgw_messaging_owner IN SCHEMA messaging
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO mcpgw_messaging;
ALTER DEFAULT PRIVILEGES FOR ROLE mcpgw_messaging_owner IN SCHEMA messaging
  GRANT USAGE, SELECT ON SEQUENCES TO mcpgw_messaging;
SQL
