// Issue 10, finding 6: the `npm start` app on its embedded store. A token request answered 500
// after trying to reach AWS STS over the internet; it must be a 4xx that says why, with no call
// out. Its multipart tickets were keyed on s3rver's publicly known secret, so anyone could forge
// one. And its upload API had no rate limit.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EMBEDDED_CREDENTIALS } from '../cli/embedded-s3.ts'
import { EMBEDDED_TOKEN_REASON, type RunningApp, startApp } from '../demo/app.ts'
import { deriveTicketSecret, signTicket } from '../server/ticket.ts'

let running: RunningApp

beforeAll(async () => {
  running = await startApp({ port: 0, host: '127.0.0.1', buildDemo: false, logger: { level: 'silent' } })
})
afterAll(() => running?.close())

const start = (body: Record<string, unknown>) =>
  running.app.inject({
    method: 'POST',
    url: `${running.prefix}`,
    headers: { 'content-type': 'application/json' },
    payload: body,
  })

describe('npm start on the embedded store', () => {
  it('a token request is a 400 naming why, and opens no connection at all (was 500 after calling AWS STS)', async () => {
    const sockets: Socket[] = []
    const record = (message: unknown) => void sockets.push((message as { socket: Socket }).socket)
    // inject() needs no socket: any socket opened now is a call out (Node's net client channel sees every one).
    subscribe('net.client.socket', record)
    try {
      const response = await start({ filename: 'a.txt', filetype: 'text/plain', filesize: 3, strategy: 'token' })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toEqual({
        error: `Token mode is not available on this server: ${EMBEDDED_TOKEN_REASON}. Upload with strategy 'presigned' instead`,
        code: 'TokenModeUnavailable',
      })
    } finally {
      unsubscribe('net.client.socket', record)
    }
    expect(sockets).toEqual([])
  })

  it("refuses a ticket forged with s3rver's well-known secret (was accepted: /parts signed URLs for it)", async () => {
    // A real multipart upload, so the forgery names an uploadId that exists.
    const started = (
      await start({
        filename: 'big.bin',
        filetype: 'application/octet-stream',
        filesize: 6 * 1024 * 1024,
        strategy: 'presigned',
      })
    ).json()
    const forged = signTicket(
      {
        kind: 'multipart',
        bucket: started.bucket,
        key: started.key,
        uploadId: started.uploadId,
        partSize: started.partSize,
        filesize: 6 * 1024 * 1024,
        partCount: 2,
        issued: Math.floor(Date.now() / 1000),
        expires: Math.floor(Date.now() / 1000) + 3600,
      },
      deriveTicketSecret(EMBEDDED_CREDENTIALS.secretAccessKey),
    )
    const parts = await running.app.inject({
      method: 'POST',
      url: `${running.prefix}/parts`,
      headers: { 'content-type': 'application/json' },
      payload: { ticket: forged, partNumbers: [1] },
    })
    expect(parts.statusCode).toBe(403)
    // Signed, but under a secret this server does not hold: refused as another instance's would be.
    expect(parts.json()).toEqual({
      error: expect.stringMatching(/^The upload ticket was not signed with this server's ticketSecret/),
    })
    // Its own tickets still work.
    const own = await running.app.inject({
      method: 'POST',
      url: `${running.prefix}/parts`,
      headers: { 'content-type': 'application/json' },
      payload: { ticket: started.ticket, partNumbers: [1] },
    })
    expect(own.statusCode).toBe(200)
  })

  it('is rate-limited by default: 429 with Retry-After once one client passes the limit', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 125; i++) {
      const reply = await running.app.inject({
        method: 'GET',
        url: `${running.prefix}/info`,
        remoteAddress: '192.0.2.9',
      })
      statuses.push(reply.statusCode)
      if (reply.statusCode === 429) {
        expect(Number(reply.headers['retry-after'])).toBeGreaterThan(0)
        break
      }
    }
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(50)
    expect(statuses.at(-1)).toBe(429)
  })
})
