/**
 * The system database URL handed to DBOS: the user's, with PostgreSQL's
 * idle_in_transaction_session_timeout set through the libpq `options` startup parameter.
 *
 * Why: left to itself, DBOS 5.3 sets that timeout with a `SET` queued on each new pool connection
 * from the pool's 'connect' event, and the pool's own first query is then sent to a client already
 * executing one — which pg 8 reports on every worker as "DeprecationWarning: Calling client.query()
 * when the client is already executing a query". DBOS skips its `SET` when the URL's `options`
 * already name the setting, so the server applies it at connection start instead: the same timeout
 * (DBOS's default), no extra round trip, no warning. A URL that sets it already is left as it is.
 */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

export function systemDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url; // DBOS reports a malformed URL in its own words at launch
  }
  const options = parsed.searchParams.get('options') ?? '';
  if (options.includes('idle_in_transaction_session_timeout')) return url;
  const setting = `-c idle_in_transaction_session_timeout=${IDLE_IN_TRANSACTION_TIMEOUT_MS}`;
  parsed.searchParams.set('options', options.trim() === '' ? setting : `${options} ${setting}`);
  return parsed.href;
}
