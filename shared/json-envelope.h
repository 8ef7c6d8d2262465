/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What produced a JSON document of nsid's programs (nsidctl, nsid-uniquifier,
 * nsid-idmapd --status): the member "nsid" every document carries, so that a fleet's
 * collected outputs can be told apart and read with the right schema:
 *   "nsid": { "schema": 1, "program", "version", "host", "time" (UTC, RFC 3339), "command" }
 * schema changes only when a member of a document changes meaning or goes away.
 */
#ifndef NSID_SHARED_JSON_ENVELOPE_H
#define NSID_SHARED_JSON_ENVELOPE_H

#include <json-c/json.h>

#define NSID_JSON_SCHEMA 1

/* A new "nsid" object for program's command (NULL: none). */
json_object *json_envelope_new(const char *program, const char *command);

/* Add it to the object o, unless o is not an object or has one already. */
void json_envelope_add(json_object *o, const char *program, const char *command);

#endif
