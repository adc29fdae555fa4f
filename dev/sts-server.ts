import { createHash, createHmac, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A stand-in for AWS STS GetFederationToken (which only AWS has): the query protocol as the AWS
 * SDK speaks it — a signed form-encoded POST in, XML out — with the request's SigV4 signature
 * verified here independently of any code under test.
 * https://docs.aws.amazon.com/STS/latest/APIReference/API_GetFederationToken.html
 */

export type StsErrorCode = 'ExpiredToken' | 'MalformedPolicyDocument' | 'PackedPolicyTooLarge' | 'RegionDisabled'

interface KeyPair {
  accessKeyId: string
  secretAccessKey: string
}

export interface StsStandIn {
  /** http://127.0.0.1:PORT */
  endpoint: string
  /** Form parameters of every request whose signature checked out, in order. */
  calls: Array<Record<string, string>>
  /** Requests refused before their parameters were looked at (bad signature, unknown key). */
  refused: Array<{ status: number; code: string }>
  /** The next call answers with this STS error instead of credentials. */
  failNext(code: StsErrorCode): void
  stop(): Promise<void>
}

/** AWS's statuses for these codes. */
const ERROR_STATUS: Record<
  StsErrorCode | 'SignatureDoesNotMatch' | 'InvalidClientTokenId' | 'InvalidAction' | 'ValidationError',
  number
> = {
  ExpiredToken: 400,
  MalformedPolicyDocument: 400,
  PackedPolicyTooLarge: 400,
  RegionDisabled: 403,
  SignatureDoesNotMatch: 403,
  InvalidClientTokenId: 403,
  InvalidAction: 400,
  ValidationError: 400,
}

/**
 * `caller`: the key pair the upload API signs its STS calls with. `issue`: the key pair handed out as
 * temporary credentials (s3rver's S3RVER/S3RVER, so the engine can upload with them).
 */
export async function startStsServer({ caller, issue }: { caller: KeyPair; issue: KeyPair }): Promise<StsStandIn> {
  const calls: StsStandIn['calls'] = []
  const refused: StsStandIn['refused'] = []
  let nextFailure: StsErrorCode | undefined

  const server = createServer(async (request, response) => {
    const body = await readBody(request)
    const problem = checkSignature(request, body, caller)
    if (problem) {
      refused.push({ status: ERROR_STATUS[problem], code: problem })
      return sendError(response, problem, `Signature check failed: ${problem}`)
    }
    const params = Object.fromEntries(new URLSearchParams(body))
    calls.push(params)
    if (params.Action !== 'GetFederationToken')
      return sendError(response, 'InvalidAction', `Unsupported action ${params.Action}`)
    if (params.Version !== '2011-06-15')
      return sendError(response, 'ValidationError', `Unsupported version ${params.Version}`)
    if (nextFailure) {
      const code = nextFailure
      nextFailure = undefined
      return sendError(response, code, `Stand-in failure ${code}`)
    }
    const duration = Number(params.DurationSeconds ?? 43_200)
    const expiration = new Date(Date.now() + duration * 1000).toISOString()
    response.writeHead(200, { 'content-type': 'text/xml' })
    response.end(`<GetFederationTokenResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <GetFederationTokenResult>
    <Credentials>
      <SessionToken>stand-in-session-${randomUUID()}</SessionToken>
      <SecretAccessKey>${issue.secretAccessKey}</SecretAccessKey>
      <Expiration>${expiration}</Expiration>
      <AccessKeyId>${issue.accessKeyId}</AccessKeyId>
    </Credentials>
    <FederatedUser>
      <Arn>arn:aws:sts::123456789012:federated-user/${params.Name}</Arn>
      <FederatedUserId>123456789012:${params.Name}</FederatedUserId>
    </FederatedUser>
    <PackedPolicySize>6</PackedPolicySize>
  </GetFederationTokenResult>
  <ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata>
</GetFederationTokenResponse>`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    refused,
    failNext(code) {
      nextFailure = code
    },
    stop: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  }
}

/**
 * Recomputes the SigV4 header signature (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html)
 * and answers the STS error code for a mismatch, or undefined when the request is genuine.
 */
function checkSignature(request: IncomingMessage, body: string, caller: KeyPair) {
  const authorization = request.headers.authorization ?? ''
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/sts\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      authorization,
    )
  if (!match) return 'SignatureDoesNotMatch' as const
  const [, accessKeyId, day, region, signedHeaders, signature] = match as unknown as string[]
  if (accessKeyId !== caller.accessKeyId) return 'InvalidClientTokenId' as const
  const amzDate = String(request.headers['x-amz-date'] ?? '')
  if (!amzDate.startsWith(day!)) return 'SignatureDoesNotMatch' as const

  const url = new URL(request.url ?? '/', 'http://stand-in')
  const query = [...url.searchParams]
    .map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`)
    .sort()
    .join('&')
  const headerNames = signedHeaders!.split(';')
  const canonicalHeaders = headerNames
    .map(
      (name) =>
        `${name}:${String(request.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('')
  const payloadHash = String(request.headers['x-amz-content-sha256'] ?? sha256(body))
  const canonical = [request.method, url.pathname, query, canonicalHeaders, signedHeaders, payloadHash].join('\n')
  const scope = `${day}/${region}/sts/aws4_request`
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n')
  let key: Buffer = hmac(`AWS4${caller.secretAccessKey}`, day!)
  for (const part of [region!, 'sts', 'aws4_request']) key = hmac(key, part)
  const expected = createHmac('sha256', key).update(stringToSign).digest('hex')
  return expected === signature && payloadHash === sha256(body) ? undefined : ('SignatureDoesNotMatch' as const)
}

function sendError(response: ServerResponse, code: keyof typeof ERROR_STATUS, message: string) {
  response.writeHead(ERROR_STATUS[code], { 'content-type': 'text/xml' })
  response.end(`<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error>
  <RequestId>${randomUUID()}</RequestId>
</ErrorResponse>`)
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex')
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest()
const rfc3986 = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
