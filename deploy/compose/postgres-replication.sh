#!/bin/sh
# With deploy/compose/postgres-standby.yml only: PostgreSQL's image runs this once, when its
# data volume is empty (/docker-entrypoint-initdb.d): the standby may stream from here, as
# the superuser, with its password (the image's pg_hba.conf admits no replication otherwise).
set -eu
echo "host replication postgres all scram-sha-256" >> "$PGDATA/pg_hba.conf"
