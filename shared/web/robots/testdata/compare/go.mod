module github.com/serverless-crawler/crawler/shared/web/robots/testdata/compare

go 1.26.8

require (
	github.com/jimsmart/grobotstxt v1.0.3
	github.com/serverless-crawler/crawler v0.0.0
	github.com/temoto/robotstxt v1.1.2
)

replace github.com/serverless-crawler/crawler => ../../../../..
