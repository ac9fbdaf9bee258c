package crawl

import "time"

// RobotsFile is a robots.txt response as fetched, kept for the other
// processes of a crawl (on AWS, the fetcher's execution environments).
type RobotsFile struct {
	Status    int
	Body      []byte
	FetchedAt time.Time
}
