/**
 * The service core's error: a code of the contract's catalogue (src/consortium/error-codes.ts) and an
 * optional detail. The core (src/server/service/) throws it; the HTTP edge (app.ts's error handler)
 * maps it to the status and body.
 */
import { ERRORS, type ErrorCode } from '../consortium/error-codes.js';

/** An error of the service core: a catalogue code and an optional detail for the message. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly detail: string | undefined;
  constructor(code: ErrorCode, detail?: string) {
    super(detail === undefined ? ERRORS[code].message : `${ERRORS[code].message}: ${detail}`);
    this.name = 'ServiceError';
    this.code = code;
    this.detail = detail;
  }

  /** The HTTP status of this error. */
  get status(): number {
    return ERRORS[this.code].status;
  }
}
