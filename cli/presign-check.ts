// The doctor's `presign` check: a browser's CORS preflight for a URL signed the way the upload API
// signs (its presignWith), sent to storage for real. Ceph RGW 16.2 refuses the preflight of any
// URL signed by an STS session (server/preflight-check.ts), which no bucket setting changes.
import type { ResolvedConfig } from '../server/config.ts'
import { credentialsOf, serverKeySigner } from '../server/credentials.ts'
import { describeServerKeyPolicy, serverKeyPolicyFor } from '../server/key-policy.ts'
import {
  describePreflight,
  type PreflightReply,
  refusesSessionPreflight,
  sendPreflight,
} from '../server/preflight-check.ts'
import { createPartPresigner, createPutPresigner } from '../server/presigned-urls.ts'
import type { Presign } from '../server/presigner.ts'
import { createSessionSigner } from '../server/session-signer.ts'
import { createS3Client } from '../server/storage.ts'
import type { TicketClaims } from '../server/ticket.ts'

/** What the doctor saw: preflights for URLs signed as the upload API signs them, and, for a session, the same signed by the server key. */
export interface PresignPreflights {
  /** What signs the upload API's URLs when storage does not refuse them. */
  signer: 'session' | 'server-key'
  /** presignWith was left to its default on a store other than AWS: the upload API falls back to the server key if storage refuses the session's. */
  fallback: boolean
  /** The preflight of a single PUT's URL, then of a part's, signed by `signer`. */
  replies: PreflightReply[]
  /** The same URLs signed by the server key (only when `signer` is the session). */
  serverKeyReplies?: PreflightReply[]
}

/** One of the doctor's findings (cli/doctor.ts `Finding`), for the `presign` check. */
export interface PresignFinding {
  check: 'presign'
  status: 'ok' | 'warn' | 'fail'
  summary: string
  fix?: string
}

const allowed = (reply: PreflightReply, origin: string) =>
  reply.status < 300 && (reply.allowOrigin === origin || reply.allowOrigin === '*')
const firstRefused = (replies: PreflightReply[], origin: string) => replies.find((reply) => !allowed(reply, origin))

/** The finding for what the preflights showed; `corsFix` is the bucket's CORS fix for this store. */
export function diagnosePresignPreflight(
  config: ResolvedConfig,
  origin: string,
  seen: PresignPreflights,
  corsFix: string,
): PresignFinding {
  const check = 'presign' as const
  const policy = describeServerKeyPolicy(serverKeyPolicyFor(config))
  const refused = firstRefused(seen.replies, origin)
  const corsFailure = (signer: string, reply: PreflightReply): PresignFinding => ({
    check,
    status: 'fail',
    summary: `storage refused the browser's CORS preflight from ${origin} for a URL signed by ${signer} (${describePreflight(reply)}${reply.allowOrigin ? '' : ', no Access-Control-Allow-Origin'}): presigned uploads from a page fail`,
    fix: corsFix,
  })
  if (seen.signer === 'server-key') {
    if (refused) return corsFailure("the server's key", refused)
    return {
      check,
      status: 'ok',
      summary: `a browser preflight from ${origin} is allowed for URLs signed by the server's key (presignWith: 'server-key')`,
    }
  }
  if (!refused)
    return {
      check,
      status: 'ok',
      summary: `a browser preflight from ${origin} is allowed for URLs signed by the STS session (presignWith: 'session')`,
    }

  const byKey = seen.serverKeyReplies ?? []
  const sessionRefusedOnly = seen.replies.some((reply, i) => byKey[i] && refusesSessionPreflight(reply, byKey[i]))
  if (!sessionRefusedOnly) return corsFailure('the STS session', refused)
  const why =
    `storage refuses the browser's CORS preflight for URLs signed by the STS session (OPTIONS → ${describePreflight(refused)}, no Access-Control-Allow-Origin), ` +
    `though it allows the same URL signed by the server's key: it checks a session-signed preflight's signature against headers a preflight cannot carry (Ceph RGW 16.2 does)`
  const keyRefused = firstRefused(byKey, origin)
  if (seen.fallback) {
    if (keyRefused) return corsFailure("the server's key (the upload API's choice on this store)", keyRefused)
    return {
      check,
      status: 'warn',
      summary: `${why}. So the upload API signs presigned URLs with the server's key on this store (it logs this at its first presigned request), and a header a page adds to a URL (x-amz-copy-source, …) acts with that key's rights`,
      fix: `Give the server's key only ${policy} (see least-privilege for the JSON). Token mode, whose credentials the session policy limits to one key, is unaffected.`,
    }
  }
  return {
    check,
    status: 'fail',
    summary: `${why}. With presignWith: 'session' every presigned upload from a page fails (the browser reports a network error); uploads from Node work`,
    fix:
      `Leave presignWith unset (and S3_UPLOAD_PRESIGN_WITH), so the upload API signs with the server's key on this store, or set presignWith: 'server-key'; ` +
      `then give that key only ${policy}. Or send presigned uploads from Node only, or use token mode in the browser.`,
  }
}

/** Signs a single PUT's URL and a part's as the upload API does, and sends storage the preflight a browser would send for each. */
export async function presignPreflights(config: ResolvedConfig, origin: string): Promise<PresignPreflights> {
  const signer = config.presignWith
  // The signer as configured, without the fallback: the doctor wants to see what the session meets.
  const configured = createSessionSigner({ ...config, presignFallback: false })
  const replies = await preflightsFor(config, origin, configured)
  if (signer === 'server-key') return { signer, fallback: false, replies }
  const serverKey = serverKeySigner(config.region, credentialsOf(createS3Client(config)))
  return {
    signer,
    fallback: config.presignFallback,
    replies,
    serverKeyReplies: await preflightsFor(config, origin, serverKey),
  }
}

async function preflightsFor(
  config: ResolvedConfig,
  origin: string,
  signer: () => Promise<Presign>,
): Promise<PreflightReply[]> {
  const key = `${config.keyPrefix}updraft-doctor-preflight`
  const put = await createPutPresigner(config, signer)({ key, contentType: 'application/octet-stream', filesize: 1 })
  // A part URL names an upload; the preflight never reaches it, so none is started.
  const claims = { bucket: config.bucket, key, uploadId: 'updraft-doctor' } as TicketClaims
  const part = (await createPartPresigner(config, signer)(claims, new Map([[1, 5 * 1024 * 1024]])))['1']!
  return [await sendPreflight(put.url, origin, Object.keys(put.headers)), await sendPreflight(part, origin, [])]
}
