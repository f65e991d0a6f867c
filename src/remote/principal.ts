/** Who is calling a served agent, and the tenants it may act for. */
export interface Principal {
  principal: string;
  tenants: readonly string[];
}

/**
 * The request `authenticate` is given: at run time Node's `IncomingMessage` itself. Typed by the
 * parts a check reads, so the published declarations compile without Node's types; cast to
 * `IncomingMessage` for the rest (its socket, say, for mutual TLS).
 */
export interface IncomingRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly method?: string | undefined;
  readonly url?: string | undefined;
}

/** Decides who sent a request; null means nobody we know (401). Runs before the body is read. */
export type Authenticate = (req: IncomingRequest) => Principal | null | Promise<Principal | null>;

/** Checks what a user's authenticate returned, so a bad hook is a clear 500, not a confused run. */
export function checkPrincipal(value: unknown): Principal | null | string {
  if (value === null || value === undefined) return null;
  const p = value as Partial<Principal>;
  if (typeof p !== 'object' || typeof p.principal !== 'string' || p.principal === '' || !Array.isArray(p.tenants) || !p.tenants.every((t) => typeof t === 'string' && t !== '')) {
    return 'authenticate must return null or { principal: string, tenants: string[] } (non-empty strings)';
  }
  return { principal: p.principal, tenants: Object.freeze([...p.tenants]) };
}
