// Package crawl holds the crawler's domain: one type per table of the
// seeds' crawler database (seed 000) and summary database (seed 002), the
// crawl exit codes and crawl types, the messages the pipeline stages pass
// to each other, and the error kinds that tell a retryable failure from a
// permanent one.
//
// Tables refer to URLs and MIME types by id; the domain refers to them by
// value (a URL string, a MIME type string). Ids of the url and mimetype
// tables are a storage detail of the SQLite adapter; the DynamoDB adapter
// keys by the normalized URL itself.
package crawl
