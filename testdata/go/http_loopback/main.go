// Tests net/http: a server on 127.0.0.1:0 and a client in the same process doing GET/POST with keep-alive, over loopback TCP.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/time", func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		fmt.Fprintf(w, "hit %d at %d from %s", n, time.Now().UnixNano(), r.RemoteAddr)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Len", fmt.Sprint(len(body)))
		w.Write([]byte(strings.ToUpper(string(body))))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	base := "http://" + ln.Addr().String()
	fmt.Printf("listening on %s\n", ln.Addr())

	client := &http.Client{Timeout: 5 * time.Second}
	for i := 0; i < 3; i++ {
		resp, err := client.Get(base + "/time")
		if err != nil {
			fmt.Println("get:", err)
			os.Exit(1)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("GET /time -> %d %s\n", resp.StatusCode, b)
	}
	payload := fmt.Sprintf("payload from pid %d at %d", os.Getpid(), time.Now().UnixNano())
	resp, err := client.Post(base+"/echo", "text/plain", strings.NewReader(payload))
	if err != nil {
		fmt.Println("post:", err)
		os.Exit(1)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("POST /echo -> %d len=%s %s\n", resp.StatusCode, resp.Header.Get("X-Len"), b)
	resp, _ = client.Get(base + "/missing")
	resp.Body.Close()
	fmt.Printf("GET /missing -> %d\n", resp.StatusCode)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Println("shutdown:", err)
	}
	fmt.Printf("hits=%d\n", hits.Load())
	fmt.Println("EXIT-SUCCESS")
}
