import { Catch, type RpcExceptionFilter } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';

/**
 * Nest's default RPC filter turns every error that is not an RpcException into
 * "Internal server error". Ours passes the error through untouched, so BusServer
 * can answer a ServiceError with its code and hide everything else.
 */
@Catch()
export class BusExceptionFilter implements RpcExceptionFilter<unknown> {
  catch(error: unknown): Observable<never> {
    return throwError(() => error);
  }
}
