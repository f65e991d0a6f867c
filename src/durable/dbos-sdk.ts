import type * as Sdk from '@dbos-inc/dbos-sdk';
import { ConfigurationError } from '../core/errors.js';

export type Dbos = typeof Sdk.DBOS;
export type DbosClient = Sdk.DBOSClient;
export type WorkflowHandle<T> = Sdk.WorkflowHandle<T>;
export type WorkflowStatus = Sdk.WorkflowStatus;

export interface DbosSdk {
  readonly DBOS: Dbos;
  readonly DBOSClient: typeof Sdk.DBOSClient;
}

/**
 * DBOS Transact, loaded when a durable worker starts and not before: it is an optional peer
 * dependency (20 packages, a third of a second to import), so nobody who does not run durable
 * trees installs or loads it.
 */
export async function loadDbos(): Promise<DbosSdk> {
  try {
    const sdk = await import('@dbos-inc/dbos-sdk');
    return { DBOS: sdk.DBOS, DBOSClient: sdk.DBOSClient };
  } catch (error) {
    if ((error as { code?: string } | null)?.code === 'ERR_MODULE_NOT_FOUND') {
      throw new ConfigurationError('symfonic/durable runs on DBOS Transact, which is not installed: npm install @dbos-inc/dbos-sdk@~5.3 (an optional peer dependency of symfonic).', { cause: error });
    }
    throw error;
  }
}
