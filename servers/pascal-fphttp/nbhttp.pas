{ HTTP/1.1 on the FCL's fphttpserver (FPC 3.2.2).

  TFPHttpServer does the listening and accepting (ssockets' TInetServer),
  the threading (Threaded: one TFPHTTPConnectionThread per connection, or
  every connection on the accepting thread) and the request and response
  objects (httpdefs' TRequest/TResponse, dispatched to OnRequest).

  What 3.2.2 cannot do, and what this unit adds through the component's
  virtual methods (CreateConnection, CreateResponse, DoConnect, and
  TFPHTTPConnection.HandleRequest):

  - Keep-alive. 3.2.2's TFPHTTPConnection.HandleRequest reads one request,
    answers it and the connection is freed (closed), without a
    `Connection: close` header; it has no KeepConnections property (FCL
    trunk added one, for threaded servers only) and its read buffer is a
    private field, so the loop cannot be built on its ReadString. TNbConnection
    reads requests itself, one after another on the same socket, as long as
    the client wants (HTTP/1.1 default, `Connection: close` honoured, HTTP/1.0
    only with `Connection: keep-alive`).
  - Chunked request bodies. 3.2.2 reads a body only by Content-Length; a
    chunked body is never read (the request arrives with an empty Content and
    the chunk bytes are left on the socket). TNbConnection decodes them.
  - The Date header. TResponse sends it only when the handler sets it;
    TNbConnection sets it on every answer (cached per thread, per second).
  - Bodies as exact bytes. TResponse.Content goes through a TStrings, which
    adds a line ending (`OK` would go out as `OK`#10), so answers are given
    as a ContentStream, and headers and body leave in one write.

  With Threaded = False one thread serves every connection, one after
  another. Keep-alive there would let one client hold the only thread
  forever, so a connection is kept only while nobody else is waiting in the
  listen queue: an answer says `Connection: close` when another connection
  is pending, and a kept connection that stays idle for a second while
  another client waits is closed. }
unit nbhttp;

{$mode objfpc}{$H+}

interface

uses
  Classes, SysUtils, ctypes, BaseUnix, Sockets, ssockets, httpdefs,
  httpprotocol, fphttpserver;

type
  { Opens the request's protected InitContent/InitRequestVars to the
    connection, as fphttpserver's own connection (same unit) uses them. }
  TNbRequest = class(TFPHTTPConnectionRequest)
  public
    procedure SetBody(var ABody: AnsiString);
  end;

  { An answer written as status line, headers and body in one send. }
  TNbResponse = class(TFPHTTPConnectionResponse)
  private
    FSock: TSocketStream;
    FHead: AnsiString;
  protected
    procedure DoSendHeaders(Headers: TStrings); override;
    procedure DoSendContent; override;
  public
    { Sets the status and an exact body. }
    procedure Answer(ACode: Integer; const AContentType, ABody: AnsiString);
  end;

  { One client connection: reads and answers requests until either side
    closes it. }
  TNbConnection = class(TFPHTTPConnection)
  private
    FBuf: AnsiString;
    FPos, FLen: Integer;  // unread bytes are FBuf[FPos..FLen]
    FRemote: AnsiString;
    function Fill: Boolean;
    function ReadLine(out Line: AnsiString; MaxLen: Integer): Integer;
    function ReadExact(var Dest: AnsiString; Count: Integer): Boolean;
    function ReadChunked(out Body: AnsiString; out Status: Integer): Boolean;
    function WaitNextRequest: Boolean;
    procedure SendRaw(const S: AnsiString);
    procedure SendError(ACode: Integer);
    function ServeOne: Boolean;
  public
    procedure HandleRequest; override;
  end;

  TNbServer = class(TFPHttpServer)
  protected
    function CreateConnection(Data: TSocketStream): TFPHTTPConnection; override;
    function CreateRequest: TFPHTTPConnectionRequest; override;
    function CreateResponse(ARequest: TFPHTTPConnectionRequest): TFPHTTPConnectionResponse; override;
    procedure DoConnect(Sender: TObject; Data: TSocketStream); override;
  public
    // Protected in 3.2.2's TFPHttpServer (trunk publishes it): the address
    // to listen on, HOST.
    property Address;
  end;

{ The current time as an IMF-fixdate, cached per thread for a second. }
function HttpDate: AnsiString;

var
  { Set by the SIGTERM handler: stop reading requests. }
  Terminating: Boolean = False;
  { The listening socket, known from the first accepted connection on. }
  ListenFD: cint = -1;

const
  MaxBody = 1024 * 1024;     // larger bodies get 413 (CONTRACT.md allows it)
  MaxHeaderLine = 16 * 1024;
  MaxHeaderBytes = 64 * 1024;
  { Threaded = False: how long an idle kept connection may still hold the
    only thread once another client is waiting in the listen queue. }
  IdleGiveUpMs = 1000;

implementation

uses
  DateUtils;

const
  BufSize = 16 * 1024;
  CRLF = #13#10;

threadvar
  DateSecond: Int64;
  DateText: AnsiString;

function HttpDate: AnsiString;
const
  DayNames: array[1..7] of string[3] = ('Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun');
  MonthNames: array[1..12] of string[3] = ('Jan', 'Feb', 'Mar', 'Apr', 'May',
    'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec');
var
  Sec: Int64;
  T: TDateTime;
  Y, Mo, D, H, Mi, S, Ms: Word;
begin
  Sec := fpTime;
  if (Sec <> DateSecond) or (DateText = '') then
  begin
    T := UnixToDateTime(Sec);
    DecodeDateTime(T, Y, Mo, D, H, Mi, S, Ms);
    DateText := Format('%s, %.2d %s %.4d %.2d:%.2d:%.2d GMT',
      [DayNames[DayOfTheWeek(T)], D, MonthNames[Mo], Y, H, Mi, S]);
    DateSecond := Sec;
  end;
  Result := DateText;
end;

{ TNbRequest }

procedure TNbRequest.SetBody(var ABody: AnsiString);
begin
  InitContent(ABody);
  InitRequestVars;
end;

{ TNbResponse }

procedure TNbResponse.DoSendHeaders(Headers: TStrings);
var
  I: Integer;
begin
  // As 3.2.2's TFPHTTPConnectionResponse.DoSendHeaders, but kept for the
  // single write in DoSendContent. Headers ends with an empty line.
  FHead := Format('HTTP/1.1 %3d %s'#13#10, [Code, GetStatusCode(Code)]);
  for I := 0 to Headers.Count - 1 do
    FHead := FHead + Headers[I] + CRLF;
end;

procedure TNbResponse.DoSendContent;
var
  S: AnsiString;
  N: Integer;
begin
  S := FHead;
  FHead := '';
  if Assigned(ContentStream) and (ContentStream.Size > 0) then
  begin
    N := Length(S);
    SetLength(S, N + ContentStream.Size);
    ContentStream.Position := 0;
    ContentStream.ReadBuffer(S[N + 1], ContentStream.Size);
  end;
  if S <> '' then
    FSock.WriteBuffer(S[1], Length(S));
end;

procedure TNbResponse.Answer(ACode: Integer; const AContentType, ABody: AnsiString);
var
  M: TMemoryStream;
begin
  Code := ACode;
  CodeText := GetStatusCode(ACode);
  ContentType := AContentType;
  M := TMemoryStream.Create;
  if ABody <> '' then
    M.WriteBuffer(ABody[1], Length(ABody));
  FreeContentStream := True;
  ContentStream := M;
end;

{ TNbConnection }

function TNbConnection.Fill: Boolean;
var
  R: ssize_t;
begin
  // Keep the unread tail, then read more behind it.
  if FPos > FLen then
  begin
    FPos := 1;
    FLen := 0;
  end
  else if FPos > 1 then
  begin
    Move(FBuf[FPos], FBuf[1], FLen - FPos + 1);
    FLen := FLen - FPos + 1;
    FPos := 1;
  end;
  if FLen >= Length(FBuf) then
    SetLength(FBuf, Length(FBuf) * 2);
  repeat
    // recv directly: TSocketStream.Read retries on EINTR, and SIGTERM must
    // be able to interrupt a connection waiting for its next request.
    R := fpRecv(Socket.Handle, @FBuf[FLen + 1], Length(FBuf) - FLen, 0);
  until (R >= 0) or (SocketError <> ESysEINTR) or Terminating;
  Result := R > 0;
  if Result then
    Inc(FLen, R);
end;

{ Reads a line ending in LF (a CR before it is dropped). Returns its length,
  -1 at end of stream or on error, -2 when it is longer than MaxLen. }
function TNbConnection.ReadLine(out Line: AnsiString; MaxLen: Integer): Integer;
var
  I, Scanned: Integer;
begin
  Line := '';
  Scanned := 0;
  repeat
    for I := FPos + Scanned to FLen do
      if FBuf[I] = #10 then
      begin
        Result := I - FPos;
        if (Result > 0) and (FBuf[I - 1] = #13) then
          Dec(Result);
        SetString(Line, PChar(@FBuf[FPos]), Result);
        FPos := I + 1;
        Exit;
      end;
    Scanned := FLen - FPos + 1;
    if Scanned > MaxLen then
      Exit(-2);
    if not Fill then
      Exit(-1);
  until False;
end;

function TNbConnection.ReadExact(var Dest: AnsiString; Count: Integer): Boolean;
var
  Have, Take: Integer;
begin
  Have := Length(Dest);
  SetLength(Dest, Have + Count);
  while Count > 0 do
  begin
    if FPos > FLen then
      if not Fill then
        Exit(False);
    Take := FLen - FPos + 1;
    if Take > Count then
      Take := Count;
    Move(FBuf[FPos], Dest[Have + 1], Take);
    Inc(FPos, Take);
    Inc(Have, Take);
    Dec(Count, Take);
  end;
  Result := True;
end;

{ Decodes a chunked body (RFC 9112 §7.1): size lines in hex with optional
  extensions, data, CRLF, a last chunk of size 0, trailers, empty line. }
function TNbConnection.ReadChunked(out Body: AnsiString; out Status: Integer): Boolean;
var
  Line, Crlf: AnsiString;
  Size, I, N: Integer;
  C: Char;
begin
  Body := '';
  Status := 400;
  Result := False;
  repeat
    if ReadLine(Line, 1024) < 0 then
      Exit;
    Size := 0;
    N := 0;
    for I := 1 to Length(Line) do
    begin
      C := Line[I];
      case C of
        '0'..'9': Size := Size * 16 + Ord(C) - Ord('0');
        'a'..'f': Size := Size * 16 + Ord(C) - Ord('a') + 10;
        'A'..'F': Size := Size * 16 + Ord(C) - Ord('A') + 10;
        ';', ' ', #9: Break;
      else
        Exit;
      end;
      Inc(N);
      if Size > MaxBody then
      begin
        Status := 413;
        Exit;
      end;
    end;
    if N = 0 then
      Exit;
    if Size = 0 then
      Break;
    if Length(Body) + Size > MaxBody then
    begin
      Status := 413;
      Exit;
    end;
    if not ReadExact(Body, Size) then
      Exit;
    if (ReadLine(Crlf, 2) <> 0) then
      Exit;
  until False;
  // Trailer fields, ignored, up to the empty line.
  repeat
    N := ReadLine(Line, MaxHeaderLine);
    if N < 0 then
      Exit;
  until N = 0;
  Result := True;
end;

{ Threaded = False only: between requests, wait for the kept connection to
  send again, but give it up when another client has been waiting to connect
  for IdleGiveUpMs while this one sent nothing (closing an idle connection
  at once would race with a request already on its way). }
function TNbConnection.WaitNextRequest: Boolean;
var
  Fds: array[0..1] of TPollFd;
  R, Count, Timeout: cint;
begin
  if FPos <= FLen then
    Exit(True);  // a pipelined request is already buffered
  Fds[0].fd := Socket.Handle;
  Fds[0].events := POLLIN;
  Fds[1].fd := ListenFD;
  Fds[1].events := POLLIN;
  Count := 2;     // watch the listener too, until someone is waiting
  Timeout := -1;
  repeat
    Fds[0].revents := 0;
    Fds[1].revents := 0;
    R := fpPoll(@Fds[0], Count, Timeout);
    if Terminating then
      Exit(False);
    if R < 0 then
    begin
      if fpGetErrno = ESysEINTR then
        Continue;
      Exit(False);
    end;
    if R = 0 then
      Exit(False);  // someone waited IdleGiveUpMs and this connection idled
    if Fds[0].revents <> 0 then
      Exit(True);   // data (or the client's close, which ServeOne sees)
    // Only the listener: a client is waiting. Give this one a last while.
    Count := 1;
    Timeout := IdleGiveUpMs;
  until False;
end;

function ListenerPending: Boolean;
var
  Fd: TPollFd;
begin
  Fd.fd := ListenFD;
  Fd.events := POLLIN;
  Fd.revents := 0;
  Result := (ListenFD >= 0) and (fpPoll(@Fd, 1, 0) > 0);
end;

procedure TNbConnection.SendRaw(const S: AnsiString);
begin
  if S <> '' then
    Socket.WriteBuffer(S[1], Length(S));
end;

procedure TNbConnection.SendError(ACode: Integer);
var
  Body: AnsiString;
begin
  Body := GetStatusCode(ACode);
  SendRaw(Format('HTTP/1.1 %d %s'#13#10'Date: %s'#13#10 +
    'Content-Type: text/plain'#13#10'Content-Length: %d'#13#10 +
    'Connection: close'#13#10#13#10'%s',
    [ACode, GetStatusCode(ACode), HttpDate, Length(Body), Body]));
end;

{ Reads, dispatches and answers one request. True when the connection stays
  open for another. }
function TNbConnection.ServeOne: Boolean;
var
  Line, Method, URL, Version, Name, Value, Body, CL, TE, Conn: AnsiString;
  P, P2, N, HeaderBytes, Status: Integer;
  BodyLen: Int64;
  HasCL, KeepAlive, IsHTTP11: Boolean;
  Req: TFPHTTPConnectionRequest;
  Resp: TFPHTTPConnectionResponse;
  Srv: TNbServer;
begin
  Result := False;
  // Request line; empty lines before it are ignored (RFC 9112 §2.2).
  repeat
    N := ReadLine(Line, MaxHeaderLine);
    if N = -1 then
      Exit;  // the client closed: normal end of a kept connection
    if N = -2 then
    begin
      SendError(414);
      Exit;
    end;
  until N > 0;
  P := Pos(' ', Line);
  P2 := 0;
  if P > 0 then
  begin
    P2 := P + 1;
    while (P2 <= Length(Line)) and (Line[P2] <> ' ') do
      Inc(P2);
  end;
  if (P <= 1) or (P2 > Length(Line)) or (P2 = P + 1) then
  begin
    SendError(400);
    Exit;
  end;
  Method := Copy(Line, 1, P - 1);
  URL := Copy(Line, P + 1, P2 - P - 1);
  Version := Copy(Line, P2 + 1, Length(Line));
  if (Copy(Version, 1, 5) <> 'HTTP/') or (Length(Version) <> 8) then
  begin
    SendError(400);
    Exit;
  end;
  Delete(Version, 1, 5);
  IsHTTP11 := Version = '1.1';
  if not IsHTTP11 and (Version <> '1.0') then
  begin
    SendError(505);
    Exit;
  end;

  Srv := TNbServer(Server);
  Req := Srv.CreateRequest;
  try
    Srv.InitRequest(Req);
    Req.Method := Method;
    Req.URL := URL;
    P := Pos('?', URL);
    if P > 0 then
      Req.PathInfo := Copy(URL, 1, P - 1)
    else
      Req.PathInfo := URL;
    Req.ProtocolVersion := Version;
    Req.RemoteAddress := FRemote;
    Req.ServerPort := Srv.Port;

    // Header fields. The few that frame the message are kept aside; every
    // field also goes to the request object as fphttpserver does it.
    CL := '';
    TE := '';
    Conn := '';
    HasCL := False;
    HeaderBytes := 0;
    repeat
      N := ReadLine(Line, MaxHeaderLine);
      if N < 0 then
      begin
        if N = -2 then
          SendError(431);
        Exit;
      end;
      Inc(HeaderBytes, N + 2);
      if HeaderBytes > MaxHeaderBytes then
      begin
        SendError(431);
        Exit;
      end;
      if N = 0 then
        Break;
      P := Pos(':', Line);
      if P <= 1 then
      begin
        SendError(400);
        Exit;
      end;
      Name := Copy(Line, 1, P - 1);
      Value := Trim(Copy(Line, P + 1, Length(Line)));
      if SameText(Name, 'Content-Length') then
      begin
        if HasCL and (Value <> CL) then
        begin
          SendError(400);
          Exit;
        end;
        HasCL := True;
        CL := Value;
      end
      else if SameText(Name, 'Transfer-Encoding') then
      begin
        if TE <> '' then
          TE := TE + ', ';
        TE := TE + Value;
      end
      else if SameText(Name, 'Connection') then
      begin
        if Conn <> '' then
          Conn := Conn + ', ';
        Conn := Conn + Value;
      end
      else if SameText(Name, 'Expect') and SameText(Value, '100-continue') then
        SendRaw('HTTP/1.1 100 Continue'#13#10#13#10);
      Req.SetFieldByName(Name, Value);
    until False;

    // The body: chunked, or by Content-Length, or none.
    Body := '';
    if TE <> '' then
    begin
      // Only "chunked" as the last coding frames a request (RFC 9112 §6.3).
      Value := LowerCase(TE);
      P := Length(Value);
      while (P > 0) and (Value[P] in [' ', #9]) do
        Dec(P);
      if (P < 7) or (Copy(Value, P - 6, 7) <> 'chunked')
        or ((P > 7) and not (Value[P - 7] in [',', ' ', #9])) then
      begin
        SendError(501);
        Exit;
      end;
      if not ReadChunked(Body, Status) then
      begin
        SendError(Status);
        Exit;
      end;
      Req.ContentLength := Length(Body);
    end
    else if HasCL then
    begin
      // 1*DIGIT, nothing else (no sign, no spaces, no list).
      BodyLen := 0;
      if CL = '' then
      begin
        SendError(400);
        Exit;
      end;
      for P := 1 to Length(CL) do
      begin
        if not (CL[P] in ['0'..'9']) then
        begin
          SendError(400);
          Exit;
        end;
        if BodyLen <= MaxBody then
          BodyLen := BodyLen * 10 + Ord(CL[P]) - Ord('0');
      end;
      if BodyLen > MaxBody then
      begin
        SendError(413);
        Exit;
      end;
      if (BodyLen > 0) and not ReadExact(Body, BodyLen) then
        Exit;
    end;
    TNbRequest(Req).SetBody(Body);

    // Keep the connection? HTTP/1.1 unless "close"; HTTP/1.0 only on
    // "keep-alive". A single-threaded server also lets go when another
    // client is waiting.
    Conn := LowerCase(Conn);
    if IsHTTP11 then
      KeepAlive := Pos('close', Conn) = 0
    else
      KeepAlive := Pos('keep-alive', Conn) > 0;
    if Terminating then
      KeepAlive := False;
    if KeepAlive and not Srv.Threaded and ListenerPending then
      KeepAlive := False;

    Resp := Srv.CreateResponse(Req);
    try
      Srv.InitResponse(Resp);
      TNbResponse(Resp).FSock := Socket;
      Resp.Date := HttpDate;
      if not KeepAlive then
        Resp.SetHeader(hhConnection, 'close')
      else if not IsHTTP11 then
        Resp.SetHeader(hhConnection, 'keep-alive');
      try
        if Srv.Active then
          Srv.HandleRequest(Req, Resp);
      except
        on E: Exception do
        begin
          if Resp.HeadersSent then
            raise;
          TNbResponse(Resp).Answer(500, 'text/plain', 'Internal Server Error');
          Resp.SetHeader(hhConnection, 'close');
          KeepAlive := False;
        end;
      end;
      if not Resp.ContentSent then
        Resp.SendContent;
    finally
      Resp.Free;
    end;
  finally
    Req.Free;
  end;
  Result := KeepAlive;
end;

procedure TNbConnection.HandleRequest;
var
  First: Boolean;
begin
  try
    SetupSocket;
    SetLength(FBuf, BufSize);
    FPos := 1;
    FLen := 0;
    FRemote := NetAddrToStr(Socket.RemoteAddress.sin_addr);
    First := True;
    repeat
      if not First and not TNbServer(Server).Threaded and not WaitNextRequest then
        Break;
      First := False;
    until Terminating or not ServeOne;
  except
    on E: Exception do
      HandleRequestError(E);
  end;
end;

{ TNbServer }

function TNbServer.CreateConnection(Data: TSocketStream): TFPHTTPConnection;
begin
  Result := TNbConnection.Create(Self, Data);
end;

function TNbServer.CreateRequest: TFPHTTPConnectionRequest;
begin
  Result := TNbRequest.Create;
end;

function TNbServer.CreateResponse(ARequest: TFPHTTPConnectionRequest): TFPHTTPConnectionResponse;
begin
  Result := TNbResponse.Create(ARequest);
end;

procedure TNbServer.DoConnect(Sender: TObject; Data: TSocketStream);
begin
  // The component keeps its TInetServer private; the accepted connection's
  // Sender is that server, whose socket the SIGTERM handler shuts down and
  // the single-threaded mode watches for waiting clients.
  if ListenFD < 0 then
    ListenFD := TSocketServer(Sender).Socket;
  inherited DoConnect(Sender, Data);
end;

end.
