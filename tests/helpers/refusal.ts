import { expect } from 'vitest'
import { RequestError } from '../../server/request-error.ts'

/** The status and message of the RequestError `run` throws; fails the test when it throws none. */
export function refusal(run: () => unknown): { status: number; message: string } {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(RequestError)
    return { status: (error as RequestError).status, message: (error as RequestError).message }
  }
  throw new Error('it was accepted: expected a RequestError')
}
