// An order's invoice as a PDF, by a signed link (modules/invoices/service.ts checks it).
import { downloadInvoice } from '../../modules/invoices/service.ts';
import { restError } from '../../rest/adapter.ts';
import type { EdgeEnvironments, EndpointHandler } from '../endpoints.ts';
import { send } from '../send.ts';

export function answerInvoicePdf(deps: { environments: EdgeEnvironments; clock: () => Date }): EndpointHandler<'invoice-pdf'> {
  return async ({ res, endpoint, url }) => {
    const download = await downloadInvoice(deps.environments[endpoint.environment].environment, endpoint.invoiceId, url.searchParams, deps.clock());
    if (download.status !== 200) return send(res, restError(download.status, download.status === 410 ? 'Expired' : 'NotFound', download.detail));
    res
      .writeHead(200, {
        'content-type': 'application/pdf',
        'content-length': download.pdf.length,
        'content-disposition': `inline; filename="invoice-${download.number}.pdf"`,
        'cache-control': 'private, no-store',
      })
      .end(download.pdf);
  };
}
