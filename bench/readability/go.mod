module github.com/serverless-crawler/crawler/bench/readability

go 1.26.8

require (
	codeberg.org/readeck/go-readability/v2 v2.1.3
	github.com/serverless-crawler/crawler v0.0.0
)

require (
	github.com/abadojack/whatlanggo v1.0.1 // indirect
	github.com/andybalholm/cascadia v1.3.3 // indirect
	github.com/bits-and-blooms/bitset v1.20.0 // indirect
	github.com/go-shiori/dom v0.0.0-20230515143342-73569d674e1c // indirect
	github.com/gogs/chardet v0.0.0-20211120154057-b7413eaefb8f // indirect
	github.com/itlightning/dateparse v0.2.1 // indirect
	github.com/nlnwa/whatwg-url v0.6.2 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/serverless-crawler/crawler => ../..
