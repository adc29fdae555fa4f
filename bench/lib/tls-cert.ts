import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

export interface SelfSigned {
  key: string
  cert: string
  /** The certificate as a file, for a client's NODE_EXTRA_CA_CERTS. */
  caFile: string
  remove(): Promise<void>
}

/**
 * A throwaway self-signed certificate for 127.0.0.1 (ECDSA P-256, one day), made with the
 * `openssl` command: Node's crypto makes keys but cannot issue X.509 certificates. Undefined when
 * there is no `openssl` (the HTTPS rows are then left out, and say so).
 */
export async function selfSignedCertificate(): Promise<SelfSigned | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'updraft-bench-tls-'))
  const [keyFile, caFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')]
  const remove = () => rm(dir, { recursive: true, force: true })
  try {
    // `req -x509` marks it CA:TRUE, so a client given it as an extra CA trusts it for the IP below.
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      caFile,
    ])
  } catch {
    await remove()
    return undefined
  }
  return { key: await readFile(keyFile, 'utf8'), cert: await readFile(caFile, 'utf8'), caFile, remove }
}
