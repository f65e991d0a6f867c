/**
 * symfonic's own version, the instrumentation scope's version on its tracer and meters. Written
 * here rather than read from package.json at run time, so a bundled copy of symfonic works as
 * well as an installed one; test/tracing/conventions.test.ts holds it equal to package.json's.
 */
export const SYMFONIC_VERSION = '0.1.0';
