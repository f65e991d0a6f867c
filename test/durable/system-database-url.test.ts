/**
 * The URL symfonic/durable hands DBOS sets idle_in_transaction_session_timeout at connection
 * start (libpq `options`), so DBOS queues no `SET` on each new pool connection — the query pg 8
 * warned about on every worker ("Calling client.query() when the client is already executing a
 * query"). test/stack-e2e/durable/tree-recovery checks a real worker's stderr is free of it.
 */
import { describe, expect, it } from 'vitest';
import { IDLE_IN_TRANSACTION_TIMEOUT_MS, systemDatabaseUrl } from '../../src/durable/system-database-url.js';

const options = (url: string) => new URL(url).searchParams.get('options');

describe('the system database URL given to DBOS', () => {
  it('carries the timeout as a startup option, the rest of the URL unchanged', () => {
    const url = systemDatabaseUrl('postgresql://u:p%40ss@127.0.0.1:5432/app?sslmode=disable');
    expect(options(url)).toBe(`-c idle_in_transaction_session_timeout=${IDLE_IN_TRANSACTION_TIMEOUT_MS}`);
    const parsed = new URL(url);
    expect([parsed.username, parsed.password, parsed.host, parsed.pathname, parsed.searchParams.get('sslmode')]).toEqual(['u', 'p%40ss', '127.0.0.1:5432', '/app', 'disable']);
  });

  it("keeps the user's own startup options, and a timeout the user set", () => {
    expect(options(systemDatabaseUrl('postgres://h/db?options=-c%20statement_timeout%3D5000'))).toBe(
      `-c statement_timeout=5000 -c idle_in_transaction_session_timeout=${IDLE_IN_TRANSACTION_TIMEOUT_MS}`,
    );
    const own = 'postgres://h/db?options=-c%20idle_in_transaction_session_timeout%3D1000';
    expect(systemDatabaseUrl(own)).toBe(own);
  });
});
