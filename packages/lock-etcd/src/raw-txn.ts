import { BackendUnavailableError } from '@fleetcron/core';
import { castGrpcError, type Etcd3, type ITxnRequest, type ITxnResponse } from 'etcd3';
import { decodeTxnResponse } from './txn-decode.js';
import { encodeTxnRequest } from './txn-encode.js';

/** gRPC path of etcd's transaction call. */
const TXN_METHOD = '/etcdserverpb.KV/Txn';

/** The part of a `@grpc/grpc-js` client this module calls (etcd3's KV service client is one). */
interface UnaryClient {
  makeUnaryRequest<T>(
    method: string,
    serialize: (value: Buffer) => Buffer,
    deserialize: (value: Buffer) => T,
    argument: Buffer,
    metadata: unknown,
    options: { deadline: Date },
    callback: (error: Error | null, value?: T) => void,
  ): unknown;
}

/** The part of etcd3's (internal) `ConnectionPool` this module calls. */
interface Pool {
  withConnection<T>(
    service: string,
    fn: (connection: { client: UnaryClient; metadata: unknown }) => Promise<T>,
  ): Promise<T>;
}

/** Sends an encoded `TxnRequest`; resolves its `TxnResponse` as `decode` reads the bytes. */
export type RawTxnCall = <T>(
  request: Buffer,
  decode: (response: Buffer) => T,
  deadline: Date,
) => Promise<T>;

/**
 * A transaction sent through the connection of an `Etcd3` client (its host choice, TLS, auth
 * token and fault-handling policies, exactly as `client.kv.txn`) but encoded and decoded by
 * `txn-encode.ts`, `txn-decode.ts` instead of `@grpc/proto-loader` (see there: the objects in and out have etcd3's
 * shapes). Errors are cast by etcd3's `castGrpcError`, as its own calls are. Returns
 * `undefined` when the client does not have the expected connection pool (another etcd3
 * version): callers then use `client.kv.txn`.
 */
export function rawTxnOf(
  client: Etcd3,
): ((txn: ITxnRequest, deadline: Date) => Promise<ITxnResponse>) | undefined {
  const call = rawTxnCallOf(client);
  if (!call) return undefined;
  return (txn, deadline) => call(encodeTxnRequest(txn), decodeTxnResponse, deadline);
}

/**
 * The wire call under {@link rawTxnOf}: already encoded bytes in, the answer's bytes given to
 * `decode` (the codec bench and its test capture etcd's real answers with it). `undefined` as
 * for {@link rawTxnOf}.
 */
export function rawTxnCallOf(client: Etcd3): RawTxnCall | undefined {
  const pool = (client as unknown as { pool?: Partial<Pool> }).pool;
  if (typeof pool?.withConnection !== 'function') return undefined;
  const connected = pool as Pool;
  return (request, decode, deadline) =>
    connected.withConnection('KV', ({ client: grpc, metadata }) => {
      if (typeof grpc.makeUnaryRequest !== 'function') {
        return Promise.reject(
          BackendUnavailableError.because(
            'etcd',
            'txn',
            "the etcd3 client's connection has no gRPC unary call: use the etcd3 version in @fleetcron/lock-etcd's peerDependencies",
          ),
        );
      }
      return new Promise((resolve, reject) => {
        grpc.makeUnaryRequest(
          TXN_METHOD,
          (buffer) => buffer,
          decode,
          request,
          metadata,
          { deadline },
          (error, value) => {
            if (error) reject(castGrpcError(error));
            else resolve(value as Awaited<ReturnType<typeof decode>>);
          },
        );
      });
    });
}
