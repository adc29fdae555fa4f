// Regression: Ceph RGW 16.2 refuses an expired presigned URL with a bare 403 AccessDenied (empty
// Message), which the engine did not take for expiry, so a part URL that sat too long failed the
// upload instead of being re-asked (found by tests/presigned-part-urls.test.ts on RGW).
import { describe, expect, it } from 'vitest'
import { S3Error } from '../../engine/core/errors.ts'
import { createRun } from '../../engine/core/run.ts'
import { type Signer, send } from '../../engine/s3/send.ts'
import type { Transport } from '../../engine/transport/transport.ts'

const bareDenied =
  '<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message></Message><RequestId>tx1</RequestId></Error>'
const expiredDenied =
  '<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>'

/** Answers each request with the next of `statuses` (403 with `body`, or 200). */
function run(renewable: boolean, statuses: number[], body = bareDenied) {
  const renews: boolean[] = []
  const transport: Transport = async () => {
    const status = statuses.shift()!
    return { status, header: () => null, body: status === 200 ? '' : body }
  }
  // A signer renews what it can (a fresh presigned URL) and throws a refusal it cannot help.
  const sign: Signer = async (refused) => {
    renews.push(!!refused)
    if (refused && !renewable) throw refused
    return { method: 'PUT', url: `https://s3.test/b/k?partNumber=2${refused ? '&fresh' : ''}` }
  }
  const sent = send(createRun({ transport, retry: { limit: 2 } }), sign, { body: 'body', signal: undefined })
  return { sent, renews }
}

describe('a refused presigned part URL is renewed once', () => {
  it('a bare 403 (RGW) on a renewable URL gets a fresh URL, which succeeds', async () => {
    const { sent, renews } = run(true, [403, 200])
    expect((await sent).status).toBe(200)
    expect(renews).toEqual([false, true])
  })

  it('"Request has expired" (S3, s3rver) is renewed the same way', async () => {
    const { sent, renews } = run(true, [403, 200], expiredDenied)
    expect((await sent).status).toBe(200)
    expect(renews).toEqual([false, true])
  })

  it('only once: a second refusal is thrown as is, neither renewed again nor retried', async () => {
    const { sent, renews } = run(true, [403, 403, 200])
    await expect(sent).rejects.toBeInstanceOf(S3Error)
    await expect(sent).rejects.toMatchObject({ code: 'AccessDenied', status: 403 })
    expect(renews).toEqual([false, true])
  })

  it('a request that cannot be renewed (a single-PUT URL, fixed credentials) is not re-sent on 403', async () => {
    for (const body of [bareDenied, expiredDenied]) {
      const { sent, renews } = run(false, [403, 200], body)
      await expect(sent).rejects.toMatchObject({ code: 'AccessDenied' })
      expect(renews).toEqual([false, true])
    }
  })
})
