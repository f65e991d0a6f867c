/**
 * The method by which a simple facade agent runs as a delegation child under its parent's
 * lineage. A symbol rather than a public option because the facade deliberately has no scope or
 * depth in its own API: only the delegation adapter reaches this door, and only to put the
 * child's spans, ledger entries and budget checks into the parent's tree instead of a new one.
 */
export const RUN_AS_CHILD: unique symbol = Symbol.for('symfonic.runAsChild');
