import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What a container runtime hands out: the JSON document the AWS SDK's container provider reads. */
export interface ContainerCredentials {
  AccessKeyId: string
  SecretAccessKey: string
  Token: string
  /** ISO 8601. */
  Expiration: string
}

/**
 * A stand-in for the container-credentials endpoint that ECS, EKS Pod Identity and Lambda run (the
 * one stand-in this kind of test may use: the credentials it serves are real, issued by RGW's STS).
 * The SDK finds it through `AWS_CONTAINER_CREDENTIALS_FULL_URI`. Every GET answers what `next()`
 * gives, so a test decides when credentials rotate.
 */
export interface CredentialsEndpoint {
  /** For AWS_CONTAINER_CREDENTIALS_FULL_URI. */
  url: string
  /** Each document served, in order. */
  served: ContainerCredentials[]
  stop(): Promise<void>
}

export async function startCredentialsEndpoint(
  next: () => Promise<ContainerCredentials>,
): Promise<CredentialsEndpoint> {
  const served: ContainerCredentials[] = []
  const server = createServer((_request, response) => {
    next().then(
      (credentials) => {
        served.push(credentials)
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(credentials))
      },
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(error.message),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/credentials`,
    served,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
